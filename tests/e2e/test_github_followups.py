"""GitHub end to end: a follow-up on the bot's own PR continues its branch; `@bot status` and
`@bot stop` answer at once, and stop kills the running job (only its requester's, or a
writer's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import (
    ALICE_ID,
    DOCSTRING,
    document_script,
    fixed_in_a_pull,
    github_settings,
    issue_comment,
    widgets,
)
from tests.e2e.stack import by_step, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.support.llm_server import finish, tool

pytestmark = pytest.mark.timeout(420)


def bot_comments(api: GitHubAPI, number: int) -> list[str]:
    return [c.body for c in api.comments.values() if c.login == BOT_LOGIN and c.number == number]


def test_a_mention_on_the_bots_pull_request_continues_its_branch(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        first_job, pull = fixed_in_a_pull(stack, monkeypatch, github_api, git_server)
        client = ingress(stack, monkeypatch)

        stack.llm.set_script(by_step(document_script()))
        again = issue_comment(
            github_api,
            git_server,
            "@resolver also document add()",
            number=pull.number,
            pull_request=True,
        )
        second_id = int(post(client, github("issue_comment.created", again)).json()["job_id"])
        stack.wait_finished(second_id)
        stack.wait_callbacks_settled()
        second_job = stack.job(second_id)

    assert second_job.outcome == "changed_code", second_job.error
    assert second_job.branch == first_job.branch == pull.head
    assert len(github_api.pulls) == 1  # updated, not a second pull request
    assert second_job.pr_url == first_job.pr_url
    commits = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{pull.head}")
    assert len(commits.splitlines()) == 2
    source = run_git("--git-dir", str(bare), "show", f"{pull.head}:calc.py")
    assert DOCSTRING in source and "return a + b" in source
    [status] = bot_comments(github_api, pull.number)
    assert "Updated the draft pull request" in status


def test_status_answers_and_stop_kills_the_running_job(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.link("dave", "github", "6001", "dave")
        stack.llm.set_script(
            by_step([tool("execute_bash", command="sleep 300"), finish("answered", "slept")])
        )
        stack.start_worker(concurrency=3)
        client = ingress(stack, monkeypatch)
        work = issue_comment(github_api, git_server, "@resolver run the slow thing")
        job_id = int(post(client, github("issue_comment.created", work)).json()["job_id"])
        stack.wait(lambda: len(stack.llm.requests) >= 1, 120, "the agent to start")

        ask = issue_comment(github_api, git_server, "@resolver status")
        asked = int(post(client, github("issue_comment.created", ask)).json()["job_id"])
        stack.wait_finished(asked, timeout=120)
        assert stack.job(job_id).state == "running"

        # Someone else, who may not push, cannot stop alice's job.
        meddle = issue_comment(github_api, git_server, "@resolver stop", login="dave", user_id=6001)
        refused = int(post(client, github("issue_comment.created", meddle)).json()["job_id"])
        stack.wait_finished(refused, timeout=120)
        assert stack.job(job_id).state == "running"

        stop = issue_comment(github_api, git_server, "@resolver stop")
        stopped = int(post(client, github("issue_comment.created", stop)).json()["job_id"])
        job = stack.wait_finished(job_id, timeout=120)
        stack.wait_callbacks_settled()

    assert (job.state, job.outcome) == ("cancelled", "cancelled")
    assert stack.job(stopped).outcome == "answered"
    replies = bot_comments(github_api, 7)
    assert any(f"Job {job_id}:" in r and ("Working" in r or "Setting up" in r) for r in replies)
    assert any(f"only the person who asked for job {job_id}" in r for r in replies)
    assert any(f"Stopping job {job_id}" in r for r in replies)
    assert any("Cancelled" in r for r in replies)
    assert len(replies) == 4  # the job's status, and one reply per command
