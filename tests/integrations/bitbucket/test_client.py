"""The Bitbucket client against the stand-in: what each call does, and how a refusal becomes a
retry or a permanent error."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from integrations.bitbucket.client import BitbucketClient
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.conformance import answer_problems, request_problems
from integrations.bitbucket.standin.state import Pull, Repo
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from tests.integrations.bitbucket.conftest import BOT_TOKEN, REPO
from tests.support.serving import served_answer


def test_write_permission_is_the_effective_permission_by_uuid(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    assert client.can_write(REPO, bitbucket_api.add_user("alice")) is True
    assert client.can_write(REPO, bitbucket_api.add_user("resolver")) is True
    assert client.can_write(REPO, bitbucket_api.add_user("bob")) is False
    assert client.permission(REPO, bitbucket_api.add_user("mallory")) == "none"


def test_a_bot_that_is_no_repository_admin_may_not_read_permissions(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    bitbucket_api.grant(repo, "resolver", "write")
    with pytest.raises(PermanentCallbackError) as refused:
        client.can_write(REPO, bitbucket_api.add_user("alice"))
    assert refused.value.status == 403


def test_a_status_comment_is_posted_then_edited(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    comment_id = client.post_comment(REPO, pull.id, "Queued")
    client.edit_comment(REPO, pull.id, comment_id, "Done")
    comment = bitbucket_api.comments[comment_id]
    assert (comment.raw, bitbucket_api.users[comment.user]) == ("Done", "resolver")
    assert [c["content"]["raw"] for c in client.comments(REPO, pull.id)] == ["Done"]


def test_someone_elses_comment_cannot_be_edited(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    theirs = bitbucket_api.add_comment(pull, "mine", "alice")
    with pytest.raises(PermanentCallbackError) as refused:
        client.edit_comment(REPO, pull.id, theirs.id, "changed")
    assert refused.value.status == 403 and theirs.raw == "mine"


def test_a_draft_pull_request_is_opened_with_draft_true(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    pull = client.open_draft_pull(REPO, "resolver/7-go", "main", "Handle empty input", "Fixes")
    [made] = bitbucket_api.pulls
    assert (made.title, made.draft, made.head, made.base) == (
        "Handle empty input",
        True,
        "resolver/7-go",
        "main",
    )
    assert (pull.number, pull.head, pull.author) == (made.id, "resolver/7-go", "resolver")
    assert pull.url == f"{bitbucket_api.url}/{REPO}/pull-requests/{made.id}"


def test_a_pull_request_already_open_from_the_branch_is_returned(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    existing = bitbucket_api.add_pull(repo, "resolver/7-go", "Go", author="resolver")
    pull = client.open_draft_pull(REPO, "resolver/7-go", "main", "Go", "")
    assert pull.number == existing.id and len(bitbucket_api.pulls) == 1


def test_open_pull_requests_are_found_by_head_and_by_base_across_pages(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    wanted = bitbucket_api.add_pull(repo, "resolver/7-go", author="resolver")
    for n in range(25):
        bitbucket_api.add_pull(repo, f"topic-{n}", base="develop")
    assert client.find_open_pull(REPO, "resolver/7-go") == client.get_pull(REPO, wanted.id)
    assert client.find_open_pull(REPO, "nothing") is None
    assert [p.number for p in client.open_pulls(REPO, "main")] == [wanted.id]
    assert len(client.open_pulls(REPO, "develop")) == 25


def test_a_next_link_off_the_api_is_not_followed(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    route = "GET /repositories/{workspace}/{repo_slug}/pullrequests"
    page = {"values": [], "next": "https://evil.example/2.0/steal?page=2"}
    bitbucket_api.fail(route, 200, body=page)
    assert client.open_pulls(REPO, "main") == ()
    assert len(bitbucket_api.calls(route)) == 1


def test_the_repository_and_the_user_are_read(client: BitbucketClient, repo: Repo) -> None:
    info = client.repository(REPO)
    assert (info.full_name, info.default_branch, info.clone_url) == (REPO, "main", repo.clone_url)
    assert client.authenticated_login() == "resolver"


def test_an_unknown_token_is_a_permanent_error(bitbucket_api: BitbucketAPI, pull: Pull) -> None:
    client = BitbucketClient(bitbucket_api.api_url, lambda: "not-a-token")
    with pytest.raises(PermanentCallbackError) as refused:
        client.post_comment(REPO, pull.id, "hello")
    assert refused.value.status == 401 and "not-a-token" not in str(refused.value)


def test_a_hidden_repository_is_not_found(
    bitbucket_api: BitbucketAPI, client: BitbucketClient
) -> None:
    bitbucket_api.add_repo("carol/secret", "http://x/carol/secret.git")
    with pytest.raises(PermanentCallbackError) as refused:
        client.repository("carol/secret")
    assert refused.value.status == 404


def test_a_server_error_or_a_rate_limit_is_transient(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, pull: Pull
) -> None:
    route = "POST /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/comments"
    bitbucket_api.fail(route, 502)
    with pytest.raises(TransientCallbackError):
        client.post_comment(REPO, pull.id, "Queued")
    bitbucket_api.fail(route, 429, headers={"Retry-After": "7"})
    with pytest.raises(TransientCallbackError) as limited:
        client.post_comment(REPO, pull.id, "Queued")
    assert limited.value.retry_after == 7.0
    assert client.post_comment(REPO, pull.id, "Queued") > 0


def test_an_unreachable_api_is_transient() -> None:
    with BitbucketAPI() as api:
        url = api.api_url
    with pytest.raises(TransientCallbackError):
        BitbucketClient(url, lambda: BOT_TOKEN).authenticated_user()


@pytest.mark.parametrize("name", ["widgets", "acme/wid?gets", "../x/y", "acme/"])
def test_a_repository_that_is_no_workspace_slash_slug_never_reaches_a_url(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, name: str
) -> None:
    with pytest.raises(PermanentCallbackError):
        client.post_comment(name, 1, "x")
    assert bitbucket_api.requests == []


def test_a_new_description_keeps_the_pull_request_a_draft_with_its_title(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    made = client.open_draft_pull(REPO, "resolver/7-go", "main", "Handle empty input", "Fixes")
    client.edit_pull_body(REPO, made.number, "Fixes, verified")
    [pull] = bitbucket_api.pulls
    assert (pull.title, pull.description, pull.draft) == (
        "Handle empty input",
        "Fixes, verified",
        True,
    )


def test_a_pull_request_from_a_fork_is_fetched_from_the_fork(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    """Bitbucket Cloud keeps no copy of a fork's branch in the destination repository: the head
    is the fork's branch, fetched from the fork's clone link. A fork's branch is not one of the
    repository's own, even by the same name."""
    fork = bitbucket_api.add_repo("alice/widgets", "https://git.example/alice/widgets.git")
    fork.private, fork.parent = False, REPO
    own = bitbucket_api.add_pull(repo, "feature", author="alice")
    forked = bitbucket_api.add_pull(repo, "feature", author="alice", fork=fork)

    found = client.get_pull(REPO, forked.id)
    assert (found.head, found.fetch_ref, found.fetch_from) == (
        "feature",
        "refs/heads/feature",
        "https://git.example/alice/widgets.git",
    )
    assert client.get_pull(REPO, own.id).fetch_ref is None
    assert client.find_open_pull(REPO, "feature") == client.get_pull(REPO, own.id)
    assert client.open_pulls(REPO, "main") == (client.get_pull(REPO, own.id),)
    # What was sent and answered (the fork as the pull request's source) is Bitbucket's own.
    problems = [p for a in bitbucket_api.answers for p in answer_problems(a.method, a.path, a.body)]
    sent = bitbucket_api.requests
    problems += [p for r in sent for p in request_problems(r.method, r.path, r.query, r.body)]
    assert problems == []


def test_a_fork_the_bot_cannot_read_is_named(
    bitbucket_api: BitbucketAPI, client: BitbucketClient, repo: Repo
) -> None:
    fork = bitbucket_api.add_repo("mallory/widgets", "https://git.example/mallory/widgets.git")
    forked = bitbucket_api.add_pull(repo, "feature", author="mallory", fork=fork)
    with pytest.raises(PermanentCallbackError) as refused:
        client.get_pull(REPO, forked.id)
    assert refused.value.status == 404
    assert "comes from the fork mallory/widgets, which I cannot read" in str(refused.value)


@pytest.mark.parametrize(
    ("call", "answer"),
    [
        *(("comment", answer) for answer in (b"[]", b"{}", b'{"id": null}')),
        *(("pull", answer) for answer in (b"[]", b"{}", b'{"id": 1, "source": "x"}')),
        *(("pulls", answer) for answer in (b"[]", b'{"values": [1]}', b'{"values": {"a": 1}}')),
        ("login", b'{"nickname": null}'),
    ],
)
def test_an_answer_of_the_wrong_shape_is_an_unusable_answer(call: str, answer: bytes) -> None:
    """JSON without what the call reads fails once as Bitbucket's unusable answer, never as
    the client's own KeyError or TypeError, and no login is 'None'."""
    with served_answer(answer) as url:
        client = BitbucketClient(url, lambda: BOT_TOKEN)
        calls: dict[str, Callable[[], object]] = {
            "comment": lambda: client.post_comment(REPO, 1, "Queued"),
            "pull": lambda: client.get_pull(REPO, 1),
            "pulls": lambda: client.open_pulls(REPO, "main"),
            "login": client.authenticated_login,
        }
        with pytest.raises(PermanentCallbackError, match="unusable"):
            calls[call]()
