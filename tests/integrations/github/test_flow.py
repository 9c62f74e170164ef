"""Issue #6's GitHub sequence through this edge, with no token in any log line or error.

The requester's permission, 👀 and a status comment, the clone URL from GitHub's answer, clone
and push on the host with the installation token, a draft PR opened once, the status edited.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from integrations.github.auth import (
    authenticated_clone_url,
    git_auth_env,
    strip_credentials,
    token_for_job,
)
from integrations.github.client import GitHubClient
from integrations.github.standin.api import BOT_LOGIN, GitHubAPI, Repo
from integrations.standin.git_http import IDENTITY, GitHttpServer, branch_head, run_git
from resolver.contract.errors import CallbackError, TransientCallbackError
from resolver.contract.triggers import read_trigger
from resolver.core.settings import Settings
from tests.integrations.github.conftest import BOT, INSTALLATION_ID, REPO

PULLS = "POST /repos/{owner}/{repo}/pulls"
BRANCH = "resolver/7-the-widget-breaks"


def run_issue_flow(
    settings: Settings, github_api: GitHubAPI, tmp_path: Path, errors: list[BaseException]
) -> tuple[int, int, str]:
    """What the job does for `@resolver fix it` on issue #7; returns (trigger, status, PR url)."""
    trigger_id = github_api.add_comment(REPO, 7, f"@{BOT} fix it", "bob")
    trigger = {"repo": REPO, "number": 7, "installation_id": INSTALLATION_ID}
    client = GitHubClient(settings, lambda: token_for_job(read_trigger(trigger), None, settings))

    assert client.can_write(REPO, "bob")
    assert not client.can_write(REPO, "dave")
    client.react(REPO, trigger_id, "eyes")
    status_id = client.post_comment(REPO, 7, "Queued")

    clone_url, base = client.repository(REPO)
    env = git_auth_env(clone_url, token_for_job(read_trigger(trigger), None, settings))
    work = tmp_path / "workspace"
    run_git("clone", "--quiet", clone_url, str(work), env=env)
    client.edit_comment(REPO, status_id, "Working: step 3")
    (work / "widget.py").write_text("def widget():\n    return 42\n")
    run_git("add", "widget.py", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "Fix the widget", cwd=work)
    run_git("push", "--quiet", "origin", f"HEAD:refs/heads/{BRANCH}", cwd=work, env=env)

    github_api.fail(PULLS, 502)
    with pytest.raises(TransientCallbackError) as outage:
        client.open_draft_pull(REPO, BRANCH, base, "Fix the widget", "Fixes #7")
    errors.append(outage.value)
    assert client.find_open_pull(REPO, BRANCH) is None  # the retry looks first: still none
    url = client.open_draft_pull(
        REPO, BRANCH, base, "Fix the widget", "Fixes #7\n\nCost: $0.12"
    ).url
    client.edit_comment(REPO, status_id, f"Done in 1m 2s · $0.12 · {url}")
    return trigger_id, status_id, url


def test_the_issue_flow_leaves_what_the_user_expects(
    settings: Settings,
    github_api: GitHubAPI,
    repo: Repo,
    git_server: GitHttpServer,
    tmp_path: Path,
) -> None:
    trigger_id, status_id, url = run_issue_flow(settings, github_api, tmp_path, [])

    assert github_api.comments[trigger_id].reactions == [(BOT_LOGIN, "eyes")]
    mine = [c for c in github_api.comments.values() if c.login == BOT_LOGIN]
    assert [(c.id, c.body) for c in mine] == [(status_id, f"Done in 1m 2s · $0.12 · {url}")]
    [pull] = github_api.pulls
    assert (pull.head, pull.base, pull.draft, pull.title) == (
        BRANCH,
        "main",
        True,
        "Fix the widget",
    )
    assert pull.body.startswith("Fixes #7")
    assert repo.bare is not None and branch_head(repo.bare, BRANCH) is not None
    assert len(github_api.minted) == 1  # one installation token served every call and git


def test_no_token_reaches_a_log_line_or_an_error_message(
    settings: Settings,
    github_api: GitHubAPI,
    repo: Repo,
    git_server: GitHttpServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    for noisy in ("httpx", "httpcore", "githubkit", "urllib3"):
        caplog.set_level(logging.DEBUG, logger=noisy)
    errors: list[BaseException] = []

    run_issue_flow(settings, github_api, tmp_path, errors)
    [token] = github_api.minted
    errors.extend(failures_with(settings, github_api, token))

    secrets = [token, git_auth_env(repo.clone_url, token)["GIT_CONFIG_VALUE_0"].split()[-1]]
    events = {r.getMessage() for r in caplog.records}
    assert "github.installation_token_minted" in events
    assert {r.name for r in caplog.records} >= {"httpx", "httpcore.http11"}, "nothing to check"
    logged = caplog.text + "".join(repr(getattr(r, "fields", "")) for r in caplog.records)
    for secret in secrets:
        assert secret not in logged
        for error in errors:
            assert secret not in describe(error)


def failures_with(settings: Settings, github_api: GitHubAPI, token: str) -> list[BaseException]:
    """Errors raised while holding the token: a refused call, a non-HTTP URL, an outage."""
    caught: list[BaseException] = []
    client = GitHubClient(settings, lambda: token)
    for call in (
        lambda: client.edit_comment(REPO, 424242, "no such comment"),
        lambda: authenticated_clone_url("ssh://git@example.test/o/r.git", token),
        lambda: GitHubClient(settings, lambda: token + "x").repository(REPO),
    ):
        with pytest.raises(CallbackError) as failed:
            call()
        caught.append(failed.value)
    return caught


def describe(error: BaseException) -> str:
    """Everything a traceback or a stored attempt row could show of an error and its chain."""
    text = ""
    current: BaseException | None = error
    while current is not None:
        text += f"{current}\n{current!r}\n{current.args!r}\n"
        current = current.__cause__ or current.__context__
    return text


def test_a_git_failure_message_can_be_stored_safely(
    settings: Settings, github_api: GitHubAPI
) -> None:
    """git echoes the URL it was given; strip_credentials makes such output safe to keep."""
    token = token_for_job(read_trigger({"installation_id": INSTALLATION_ID}), None, settings)
    bare_url = "http://127.0.0.1:9/octo/missing.git"
    stderr = f"fatal: repository '{authenticated_clone_url(bare_url, token)}/' not found"
    assert strip_credentials(stderr) == f"fatal: repository '{bare_url}/' not found"
