"""GitHub end to end: what else a mention may end in than a draft pull request (that one, on
each forge: test_mention.py): an answer, a polite refusal, how to link an account."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import ALICE_ID, github_settings, issue_comment, widgets
from tests.e2e.stack import ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.support.llm_server import finish, tool

pytestmark = pytest.mark.timeout(300)
COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"


def bot_comments(api: GitHubAPI) -> list[str]:
    return [c.body for c in api.comments.values() if c.login == BOT_LOGIN]


def test_a_question_is_answered_without_a_branch(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.push(
            tool("execute_bash", command="cat calc.py"),
            finish("answered", "add() returns a - b: it subtracts."),
        )
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        payload = issue_comment(github_api, git_server, "@resolver what does add() do?")
        job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)

    assert job.outcome == "answered" and job.branch is None and job.pr_url is None
    assert github_api.pulls == []
    assert run_git("--git-dir", str(bare), "branch", "--list", "resolver/*") == ""
    [status] = bot_comments(github_api)
    assert "add() returns a - b: it subtracts." in status


def test_a_reader_without_write_access_is_refused_politely(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("dave", "github", "6001", "dave")
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        payload = issue_comment(
            github_api, git_server, "@resolver fix it", login="dave", user_id=6001
        )
        job_id = int(post(client, github("issue_comment.created", payload)).json()["job_id"])
        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        job = stack.job(job_id)

    assert (job.state, job.outcome) == ("failed", "refused")
    assert stack.llm.requests == []  # the agent never ran
    [status] = bot_comments(github_api)
    assert "only take requests from people who can push" in status and "@dave" in status


def test_an_unlinked_sender_is_told_once_how_to_link_an_account(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    github_api.fail(COMMENTS, 502, applied=True)  # the notice is posted, its answer lost
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        for text in ("@resolver fix it", "@resolver fix it, please"):
            payload = issue_comment(github_api, git_server, text, login="erin", user_id=7001)
            answer = post(client, github("issue_comment.created", payload))
            assert (answer.status_code, answer.json()) == (200, {"notice": "unlinked"})
        stack.wait(lambda: len(bot_comments(github_api)) == 1, 120, "the notice")
        stack.wait_callbacks_settled()

    [notice] = bot_comments(github_api)
    assert len(github_api.calls(COMMENTS)) == 1
    assert "@erin" in notice and "resolver users link" in notice and "--external-id 7001" in notice
    assert stack.llm.requests == []
