"""GitHubClient against the local GitHub API: what each call leaves behind on GitHub's side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from integrations.github.auth import installation_token
from integrations.github.client import GitHubClient
from integrations.github.standin.api import BOT_LOGIN, GitHubAPI, Repo
from integrations.standin.git_http import GitHttpServer
from resolver.contract.errors import PermanentCallbackError
from resolver.core.settings import Settings
from tests.integrations.github.conftest import (
    APP_ID,
    BOT,
    INSTALLATION_ID,
    REPO,
    AppKey,
    _checked,
    make_settings,
    push_branch,
)


@pytest.fixture
def client(settings: Settings, repo: Repo) -> GitHubClient:
    return GitHubClient(settings, lambda: installation_token(INSTALLATION_ID, settings))


@pytest.mark.parametrize(
    ("login", "allowed"),
    [("alice", True), ("carol", True), ("bob", True), ("dave", False), ("mallory", False)],
    ids=["admin", "maintain", "write", "triage", "outsider"],
)
def test_can_write_means_admin_maintain_or_write(
    client: GitHubClient, login: str, allowed: bool
) -> None:
    assert client.can_write(REPO, login) is allowed


def test_react_puts_eyes_on_the_triggering_comment(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    comment_id = github_api.add_comment(REPO, 7, f"@{BOT} please fix", "bob")
    client.react(REPO, comment_id, "eyes")
    client.react(REPO, comment_id, "eyes")  # a retried task: GitHub answers 200, no duplicate
    assert github_api.comments[comment_id].reactions == [(BOT_LOGIN, "eyes")]
    assert [r.status for r in github_api.requests if r.method == "POST"][-2:] == [201, 200]


def test_status_comment_is_posted_then_edited_in_place(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    comment_id = client.post_comment(REPO, 7, "Queued")
    client.edit_comment(REPO, comment_id, "Working (step 3)")
    client.edit_comment(REPO, comment_id, "Done in 2m 3s · $0.41")
    mine = [c for c in github_api.comments.values() if c.login == BOT_LOGIN]
    assert [(c.id, c.number, c.body) for c in mine] == [(comment_id, 7, "Done in 2m 3s · $0.41")]


def test_editing_a_missing_comment_is_permanent(client: GitHubClient) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.edit_comment(REPO, 999, "gone")
    assert failed.value.status == 404


def test_draft_pull_is_opened_once(
    client: GitHubClient, github_api: GitHubAPI, git_server: GitHttpServer, tmp_path: Path
) -> None:
    branch = "resolver/7-fix-the-widget"
    push_branch(git_server, installation_token(INSTALLATION_ID, client._settings), branch, tmp_path)
    assert client.find_open_pull(REPO, branch) is None

    url = client.open_draft_pull(REPO, branch, "main", "Fix the widget", "Fixes #7").url

    found = client.find_open_pull(REPO, branch)
    assert found is not None
    assert (found.url, found.head, found.base) == (url, branch, "main")
    assert client.find_open_pull(REPO, "resolver/other") is None
    [pull] = github_api.pulls
    assert (pull.head, pull.base, pull.draft, pull.body) == (branch, "main", True, "Fixes #7")
    assert url == f"{github_api.web_url}/{REPO}/pull/{pull.number}"


def test_a_pull_requests_description_is_rewritten(
    client: GitHubClient, github_api: GitHubAPI, git_server: GitHttpServer, tmp_path: Path
) -> None:
    branch = "resolver/7-describe"
    push_branch(git_server, installation_token(INSTALLATION_ID, client._settings), branch, tmp_path)
    number = client.open_draft_pull(REPO, branch, "main", "Describe", "first").number
    client.edit_pull_body(REPO, number, "### Verification\n- ✅ `pytest`")
    [pull] = github_api.pulls
    assert (pull.title, pull.body) == ("Describe", "### Verification\n- ✅ `pytest`")
    [call] = github_api.calls("PATCH /repos/{owner}/{repo}/pulls/{pull_number}")
    assert call.status == 200


def test_a_pull_opened_by_a_racing_worker_is_reused(
    client: GitHubClient, github_api: GitHubAPI, git_server: GitHttpServer, tmp_path: Path
) -> None:
    branch = "resolver/7-race"
    push_branch(git_server, installation_token(INSTALLATION_ID, client._settings), branch, tmp_path)
    first = client.open_draft_pull(REPO, branch, "main", "Race", "one")
    second = client.open_draft_pull(REPO, branch, "main", "Race", "two")
    assert second == first
    assert len(github_api.pulls) == 1
    assert [r.status for r in github_api.calls("POST /repos/{owner}/{repo}/pulls")] == [201, 422]


def test_without_drafts_a_regular_pull_is_opened(
    client: GitHubClient,
    github_api: GitHubAPI,
    repo: Repo,
    git_server: GitHttpServer,
    tmp_path: Path,
) -> None:
    repo.drafts_supported = False
    push_branch(git_server, installation_token(INSTALLATION_ID, client._settings), "b", tmp_path)
    url = client.open_draft_pull(REPO, "b", "main", "T", "B").url
    [pull] = github_api.pulls
    assert pull.draft is False
    assert url.endswith(f"/pull/{pull.number}")


def test_a_pull_from_a_branch_never_pushed_is_permanent(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.open_draft_pull(REPO, "resolver/nothing", "main", "T", "B")
    assert failed.value.status == 422
    assert github_api.pulls == []


def test_reply_lands_in_the_review_thread(client: GitHubClient, github_api: GitHubAPI) -> None:
    parent = github_api.add_review_comment(REPO, 12, f"@{BOT} rename this", "bob")
    reply_id = client.reply_to_review_comment(REPO, 12, parent, "Renamed in abc123")
    reply = github_api.review_comments[reply_id]
    assert (reply.in_reply_to, reply.number, reply.body) == (parent, 12, "Renamed in abc123")


def test_repository_reports_the_forges_clone_url_and_default_branch(
    client: GitHubClient, git_server: GitHttpServer
) -> None:
    assert client.repository(REPO) == (git_server.url_for(REPO), "main")


def test_every_call_carries_the_installation_token(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    client.can_write(REPO, "bob")
    client.post_comment(REPO, 1, "hi")
    [token] = github_api.minted
    api_calls = [r for r in github_api.requests if not r.path.startswith("/app/")]
    assert [r.headers["authorization"] for r in api_calls] == [f"token {token}"] * 2
    assert all(r.headers["user-agent"] == f"Resolver ({BOT})" for r in api_calls)


def test_a_bad_repository_name_is_permanent(client: GitHubClient) -> None:
    with pytest.raises(PermanentCallbackError):
        client.repository("not-a-full-name")


@pytest.fixture
def enterprise_api(app_key: AppKey) -> Iterator[GitHubAPI]:
    api = GitHubAPI(app_id=APP_ID, public_key=app_key.public_pem, prefix="/api/v3")
    api.add_installation(INSTALLATION_ID)
    yield from _checked(api)


def test_github_enterprise_base_url_with_a_path(enterprise_api: GitHubAPI, key_file: Path) -> None:
    """GHES serves the API under /api/v3: token minting and calls keep that prefix."""
    enterprise_api.add_repo(REPO, "https://ghe.example.test/octo/widgets.git")
    settings = make_settings(enterprise_api.base_url, key_file)
    client = GitHubClient(settings, lambda: installation_token(INSTALLATION_ID, settings))
    assert client.repository(REPO) == ("https://ghe.example.test/octo/widgets.git", "main")
    assert [r.status for r in enterprise_api.requests] == [201, 200]


@pytest.mark.parametrize(
    ("count", "pages"),
    [(40, ["1"]), (130, ["1", "2"]), (250, ["1", "3"]), (220, ["1", "3", "2"])],
)
def test_the_newest_comments_are_read_from_the_last_pages(
    client: GitHubClient, github_api: GitHubAPI, count: int, pages: list[str]
) -> None:
    ids = [github_api.add_comment(REPO, 9, f"comment {n}", "bob") for n in range(count)]
    found = client.issue_comments(REPO, 9, 50)
    assert [c["id"] for c in found] == ids[-50:]
    route = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"
    assert [r.query["page"][0] for r in github_api.calls(route)] == pages


def test_the_newest_review_comments_are_read_from_the_last_pages(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    ids = [github_api.add_review_comment(REPO, 4, f"nit {n}", "bob", "a.py", n) for n in range(150)]
    assert [c["id"] for c in client.review_comments(REPO, 4, 50)] == ids[-50:]


def test_the_stand_in_pages_like_github(
    settings: Settings, repo: Repo, github_api: GitHubAPI
) -> None:
    """30 a page unless asked, at most 100, with Link to the next and last pages."""
    for n in range(65):
        github_api.add_comment(REPO, 9, f"comment {n}", "bob")
    token = installation_token(INSTALLATION_ID, settings)
    url = f"{github_api.base_url}/repos/{REPO}/issues/9/comments"
    headers = {"Authorization": f"token {token}"}
    first = httpx.get(url, headers=headers)
    assert len(first.json()) == 30
    assert set(first.links) == {"next", "last"} and first.links["last"]["url"].endswith("page=3")
    last = httpx.get(url, params={"page": 3}, headers=headers)
    assert len(last.json()) == 5 and set(last.links) == {"prev", "first"}
    assert len(httpx.get(url, params={"per_page": 500}, headers=headers).json()) == 65


def test_a_pull_request_from_a_fork_is_fetched_from_the_head_github_keeps() -> None:
    from integrations.github.client import _pull_info

    def pull(head_repo: object) -> dict[str, object]:
        base = {"ref": "main", "repo": {"full_name": "octo/widgets"}}
        head = {"ref": "feature", "repo": head_repo}
        return {"number": 7, "html_url": "https://h/7", "head": head, "base": base}

    assert _pull_info(pull({"full_name": "octo/widgets"})).fetch_ref is None
    assert _pull_info(pull({"full_name": "mallory/widgets"})).fetch_ref == "refs/pull/7/head"
    # A fork deleted since: GitHub sends `"repo": null`, and still keeps the head.
    assert _pull_info(pull(None)).fetch_ref == "refs/pull/7/head"
