"""The Forgejo client against the stand-in: what each call does on the instance, and how a
refusal becomes a retry or a permanent error."""

from __future__ import annotations

import pytest

from integrations.forgejo.client import ForgejoClient
from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Repo
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from tests.integrations.forgejo.conftest import BOT_TOKEN, REPO


def test_write_permission_comes_from_the_collaborator_permission_api(
    client: ForgejoClient, repo: Repo
) -> None:
    assert client.can_write(REPO, "alice") is True
    assert client.can_write(REPO, "forgejo") is True  # the owner
    assert client.can_write(REPO, "bob") is False
    assert client.can_write(REPO, "resolver") is True


def test_a_bot_that_is_no_repository_admin_is_refused_others_permissions(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    repo.collaborators["resolver"] = "write"
    with pytest.raises(PermanentCallbackError) as refused:
        client.can_write(REPO, "alice")
    assert refused.value.status == 403
    assert "repo admins can query all repo permissions" in str(refused.value)


def test_a_status_comment_is_posted_then_edited(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    comment_id = client.post_comment(REPO, 7, "Queued")
    client.edit_comment(REPO, comment_id, "Done")
    comment = forgejo_api.comments[comment_id]
    assert (comment.body, forgejo_api.users[comment.user_id]) == ("Done", "resolver")
    assert [c["body"] for c in client.issue_comments(REPO, 7)] == ["Done"]


def test_a_reaction_is_posted_once(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    comment = forgejo_api.add_comment(repo, 7, "@resolver go", "alice")
    client.react(REPO, comment.id)
    client.react(REPO, comment.id)
    client.react_to_issue(REPO, 7, "rocket")
    found = [(r.content, r.comment_id, r.number) for r in forgejo_api.reactions]
    assert found == [("eyes", comment.id, None), ("rocket", None, 7)]


def test_a_draft_pull_request_is_a_wip_title(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    pull = client.open_draft_pull(REPO, "resolver/7-go", "main", "Handle empty input", "Fixes #7")
    [made] = forgejo_api.pulls
    assert (made.title, made.draft, made.head, made.base) == (
        "WIP: Handle empty input",
        True,
        "resolver/7-go",
        "main",
    )
    assert (pull.number, pull.head, pull.author) == (made.number, "resolver/7-go", "resolver")
    assert pull.url == f"{forgejo_api.url}/{REPO}/pulls/{made.number}"


def test_a_pull_request_already_open_from_the_branch_is_returned(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    existing = forgejo_api.add_pull(repo, "resolver/7-go", "WIP: Go", author="resolver")
    pull = client.open_draft_pull(REPO, "resolver/7-go", "main", "Go", "")
    assert pull.number == existing.number and len(forgejo_api.pulls) == 1


def test_open_pull_requests_are_found_by_head_and_by_base_across_pages(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    wanted = forgejo_api.add_pull(repo, "resolver/7-go", author="resolver")
    for n in range(60):
        forgejo_api.add_pull(repo, f"topic-{n}", base="develop")
    assert client.find_open_pull(REPO, "resolver/7-go") == client.get_pull(REPO, wanted.number)
    assert client.find_open_pull(REPO, "nothing") is None
    assert [p.number for p in client.open_pulls(REPO, "main")] == [wanted.number]
    assert len(client.open_pulls(REPO, "develop")) == 60


def test_a_pull_request_body_is_replaced(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    pull = forgejo_api.add_pull(repo, "resolver/7-go")
    client.edit_pull_body(REPO, pull.number, "Fixes #7, verified")
    assert pull.body == "Fixes #7, verified"


def test_the_repository_and_the_user_are_read(client: ForgejoClient, repo: Repo) -> None:
    info = client.repository(REPO)
    assert (info.full_name, info.default_branch) == (REPO, "main")
    assert info.clone_url == repo.clone_url
    assert client.authenticated_login() == "resolver"


def test_hooks_are_created_active_on_the_routed_events(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    forgejo_api.add_org("forgejo", "resolver")
    repo_hook = client.create_repo_hook(REPO, "https://resolver.example/webhooks/forgejo", "s3")
    org_hook = client.create_org_hook(
        "forgejo", "https://r.example/webhooks/forgejo", "s4", "gitea"
    )
    made, org = forgejo_api.hooks[repo_hook], forgejo_api.hooks[org_hook]
    assert (made.owner, made.type, made.active, made.secret) == (REPO, "forgejo", True, "s3")
    assert (org.owner, org.type, org.secret) == ("forgejo", "gitea", "s4")
    assert "issue_comment" in made.events and "pull_request_review" in made.events
    assert all("s3" not in str(answer.body) for answer in forgejo_api.answers)


def test_an_unknown_token_is_a_permanent_error(forgejo_api: ForgejoAPI, repo: Repo) -> None:
    client = ForgejoClient(forgejo_api.url, lambda: "not-a-token")
    with pytest.raises(PermanentCallbackError) as refused:
        client.post_comment(REPO, 7, "hello")
    assert refused.value.status == 401
    assert "not-a-token" not in str(refused.value)


def test_a_hidden_repository_is_not_found(forgejo_api: ForgejoAPI, client: ForgejoClient) -> None:
    forgejo_api.add_repo("carol/secret", "http://x/carol/secret.git", private=True)
    with pytest.raises(PermanentCallbackError) as refused:
        client.repository("carol/secret")
    assert refused.value.status == 404


def test_a_server_error_or_a_rate_limit_is_transient(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    route = "POST /repos/{owner}/{repo}/issues/{index}/comments"
    forgejo_api.fail(route, 502)
    with pytest.raises(TransientCallbackError):
        client.post_comment(REPO, 7, "Queued")
    forgejo_api.fail(route, 429, headers={"Retry-After": "7"})
    with pytest.raises(TransientCallbackError) as limited:
        client.post_comment(REPO, 7, "Queued")
    assert limited.value.retry_after == 7.0
    assert client.post_comment(REPO, 7, "Queued") > 0


def test_an_unreachable_instance_is_transient() -> None:
    with ForgejoAPI() as api:
        url = api.url
    with pytest.raises(TransientCallbackError):
        ForgejoClient(url, lambda: BOT_TOKEN).authenticated_login()


@pytest.mark.parametrize("name", ["widgets", "forgejo/wid?gets", "../x/y", "forgejo/"])
def test_a_repository_that_is_no_owner_slash_name_never_reaches_a_url(
    forgejo_api: ForgejoAPI, client: ForgejoClient, name: str
) -> None:
    with pytest.raises(PermanentCallbackError):
        client.post_comment(name, 7, "x")
    assert forgejo_api.requests == []


def test_a_login_is_one_path_segment(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    with pytest.raises(PermanentCallbackError) as refused:
        client.can_write(REPO, "alice/../../user")
    assert refused.value.status == 404
    [request] = forgejo_api.requests
    assert request.path == f"/repos/{REPO}/collaborators/alice%2F..%2F..%2Fuser/permission"


def test_a_pull_request_from_a_fork_is_fetched_from_the_head_forgejo_keeps() -> None:
    from integrations.forgejo.client import _pull_info

    def pull(owner: str) -> dict[str, object]:
        base = {"ref": "main", "repo": {"full_name": "octo/widgets"}}
        head = {"ref": "feature", "repo": {"full_name": f"{owner}/widgets"}}
        return {"number": 7, "html_url": "https://h/7", "head": head, "base": base}

    assert _pull_info(pull("octo")).fetch_ref is None
    assert _pull_info(pull("mallory")).fetch_ref == "refs/pull/7/head"
