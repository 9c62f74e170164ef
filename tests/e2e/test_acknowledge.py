"""The Procfile's layout: a long job does not hold back another job's 👀."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import github_settings, issue_comment, widgets
from tests.e2e.stack import by_step, fix_script, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.support.llm_server import Reply
from tests.support.procs import wait_until

pytestmark = pytest.mark.timeout(300)


def test_a_long_job_does_not_delay_the_next_mention_s_eyes(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    widgets(github_api, git_server)
    settings = github_settings(github_api, key_file)
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        stack.link("alice", "github", "5001", "alice")
        # The first job holds its only slot until the test has seen the second mention's 👀 and
        # status: long enough under any load, and no longer.
        release = threading.Event()
        fix = by_step(fix_script())

        def held(request: dict[str, Any]) -> Reply:
            release.wait(120)
            return fix(request)

        stack.llm.set_script(held)
        # One job slot, so the second job waits for the first; callbacks have their own worker.
        stack.start_resolver_worker("jobs", "jobs", 1)
        stack.start_resolver_worker("callbacks", "callbacks,default", 4)
        client = ingress(stack, monkeypatch)
        first = issue_comment(github_api, git_server, "@resolver please fix add()", number=7)
        first_job = int(post(client, github("issue_comment.created", first)).json()["job_id"])
        wait_until(lambda: stack.job(first_job).state == "running", 60, "the first job")
        second = issue_comment(github_api, git_server, "@resolver please fix add()", number=8)
        second_job = int(post(client, github("issue_comment.created", second)).json()["job_id"])
        comment = github_api.comments[second["comment"]["id"]]
        wait_until(lambda: (BOT_LOGIN, "eyes") in comment.reactions, 10, "the second 👀")
        # The 👀 came while the first job still held the only job slot: it did not wait for
        # it. How soon it comes is measured by bench/load.py, not here.
        assert stack.job(first_job).state == "running" and stack.job(second_job).state == "queued"
        wait_until(lambda: bool(bot_comments(github_api, 8)), 10, "its status")
        assert "Queued" in bot_comments(github_api, 8)[0]
        release.set()
        stack.wait_finished(second_job, timeout=180)
        stack.wait_callbacks_settled()


def bot_comments(api: GitHubAPI, number: int) -> list[str]:
    return [c.body for c in api.comments.values() if c.login == BOT_LOGIN and c.number == number]
