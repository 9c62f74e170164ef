"""Every trigger reaches an end its requester sees: a failure injected at each stage of a GitHub
job (clone, setup, LLM, sandbox, push, pull request, the status post itself) ends in a status
comment that says what happened."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import github_settings, mention, widgets
from tests.e2e.stack import SUMMARY, Stack, fix_script, running_stack
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import finish, tool

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]
PULLS = "POST /repos/{owner}/{repo}/pulls"
COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
REJECT_PUSHES = "#!/bin/sh\necho 'protected: pushes are refused' >&2\nexit 1\n"


def status_of(api: GitHubAPI) -> str:
    [status] = [c.body for c in api.comments.values() if c.login == BOT_LOGIN]
    return status


def run(
    stack: Stack,
    monkeypatch: pytest.MonkeyPatch,
    api: GitHubAPI,
    git: GitHttpServer,
    ended: Callable[[str], bool],
) -> str:
    """Mention the bot, wait until its status comment shows the end, and return it."""
    stack.start_beat()
    stack.wait_finished(mention(stack, monkeypatch, api, git))

    def shown() -> bool:
        bodies = [c.body for c in api.comments.values() if c.login == BOT_LOGIN]
        return len(bodies) == 1 and ended(bodies[0])

    stack.wait(shown, 120, "the status comment to show the end")
    return status_of(api)


@pytest.fixture
def settings(github_api: GitHubAPI, key_file: Path) -> dict[str, str]:
    return {
        **github_settings(github_api, key_file),
        "RESOLVER_LLM_MAX_RETRIES": "0",
        "RESOLVER_STATUS_REPOST_SECONDS": "1",
    }


def failed(text: str) -> Callable[[str], bool]:
    return lambda body: body.startswith("❌ **Failed.**") and text in body


def test_a_clone_that_fails(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    settings: dict[str, str],
) -> None:
    # The forge lists the repository, but its git server has nothing there.
    github_api.add_repo(REPO, git_server.url_for("octo/nowhere"), collaborators={"alice": "write"})
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        status = run(stack, monkeypatch, github_api, git_server, failed("git clone failed"))
    assert "**Run again**" in status


def test_a_setup_that_fails(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    settings: dict[str, str],
) -> None:
    bare = create_bare_repo(
        git_server.root, REPO, {"calc.py": "x = 1\n", ".resolver/setup.sh": "echo no; exit 3\n"}
    )
    github_api.add_repo(REPO, git_server.url_for(REPO), collaborators={"alice": "write"}, bare=bare)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        status = run(
            stack, monkeypatch, github_api, git_server, lambda body: "exited with code 3" in body
        )
    assert "setup failed" in status


def test_a_model_that_stays_unavailable(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    settings: dict[str, str],
) -> None:
    widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        # The scripted model has no reply at all: every call is a 500.
        run(stack, monkeypatch, github_api, git_server, lambda b: "LLM provider stayed" in b)


def test_a_sandbox_that_cannot_start(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    settings: dict[str, str],
) -> None:
    widgets(github_api, git_server)
    broken = {**settings, "RESOLVER_SANDBOX_IMAGE": "resolver-sandbox:no-such-tag"}
    with running_stack(resolver_env, tmp_path, **broken) as stack:
        status = run(stack, monkeypatch, github_api, git_server, failed("the sandbox failed"))
    assert "resolver doctor" in status


def test_a_push_the_forge_refuses(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    settings: dict[str, str],
) -> None:
    _, bare = widgets(github_api, git_server)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(REJECT_PUSHES)
    hook.chmod(0o755)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.llm.push(*fix_script())
        status = run(stack, monkeypatch, github_api, git_server, failed("git push failed"))
    assert "pushes are refused" in status


def test_a_pull_request_the_forge_refuses(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    settings: dict[str, str],
) -> None:
    widgets(github_api, git_server)
    github_api.fail(PULLS, 403, times=1)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.llm.push(*fix_script())
        status = run(
            stack, monkeypatch, github_api, git_server, lambda b: "could not be opened" in b
        )
    assert re.search(r"Pushed `resolver/7-[^`]+`, but the draft pull request could not", status)
    assert github_api.pulls == []


def test_a_status_post_that_fails_is_made_again(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    settings: dict[str, str],
) -> None:
    widgets(github_api, git_server)
    # Every status post during the job is refused for good (403)…
    github_api.fail(COMMENTS, 403, times=1000)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.llm.push(tool("execute_bash", command="cat calc.py"), finish("answered", SUMMARY))
        stack.start_beat()
        job_id = mention(stack, monkeypatch, github_api, git_server, "@resolver what is add()?")
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        assert [c for c in github_api.comments.values() if c.login == BOT_LOGIN] == []
        # …until the forge takes posts again: the watchdog posts the final status.
        github_api.fail(COMMENTS, 403, times=0)
        stack.wait(
            lambda: (
                "Answered"
                in "".join(c.body for c in github_api.comments.values() if c.login == BOT_LOGIN)
            ),
            60,
            "the final status",
        )
    assert SUMMARY in status_of(github_api)
