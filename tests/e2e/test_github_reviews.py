"""GitHub end to end: a review of the bot's own pull request is one job that takes every open
thread, pushes once and replies in each thread; someone who may not push is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, run_git
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import (
    fixed_in_a_pull,
    github_settings,
    review_comment_created,
    review_submitted,
    widgets,
)
from tests.e2e.stack import by_step, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import finish, tool

pytestmark = pytest.mark.timeout(420)

DOCSTRING = '    """Add two numbers."""\n'
HUNK = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b"
REVIEW_ID = 880001
ASKS = ("please document add()", "@resolver name the parameters better", "is this tested?")


def test_a_review_with_three_comments_is_one_job_three_replies_and_one_push(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        _, pull = fixed_in_a_pull(stack, monkeypatch, github_api, git_server)
        client = ingress(stack, monkeypatch)
        threads = [
            github_api.add_review_comment(
                REPO, pull.number, ask, "alice", "calc.py", 2, HUNK, REVIEW_ID
            )
            for ask in ASKS
        ]
        stack.llm.set_script(
            by_step(
                [
                    tool(
                        "str_replace_editor",
                        command="str_replace",
                        path="calc.py",
                        old_str="def add(a, b):\n",
                        new_str="def add(a, b):\n" + DOCSTRING,
                    ),
                    tool(
                        "finish",
                        outcome="changed_code",
                        summary="Documented add().",
                        threads={str(threads[0]): "Added a docstring.", str(threads[2]): ""},
                    ),
                ]
            )
        )
        review = review_submitted(
            git_server, number=pull.number, head=pull.head, review_id=REVIEW_ID
        )
        answers = [post(client, github("pull_request_review.submitted", review))]
        mentioned = review_comment_created(github_api, git_server, threads[1], head=pull.head)
        answers.append(post(client, github("pull_request_review_comment.created", mentioned)))
        job_ids = {int(answer.json()["job_id"]) for answer in answers}
        [review_job] = job_ids
        stack.wait_finished(review_job)
        stack.wait_callbacks_settled()
        job = stack.job(review_job)

    assert job.outcome == "changed_code", job.error
    assert job.branch == pull.head and len(github_api.pulls) == 1
    head = run_git("--git-dir", str(bare), "rev-parse", pull.head).strip()
    commits = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{pull.head}")
    assert len(commits.splitlines()) == 2  # the first job's push and this one's
    replies = {
        c.in_reply_to: c.body
        for c in github_api.review_comments.values()
        if c.login == BOT_LOGIN and c.in_reply_to is not None
    }
    assert set(replies) == set(threads)
    assert len([c for c in github_api.review_comments.values() if c.login == BOT_LOGIN]) == 3
    assert replies[threads[0]].startswith("Added a docstring.") and head in replies[threads[0]]
    assert replies[threads[1]].startswith(f"Addressed in {head}.")
    assert replies[threads[2]].startswith(f"Addressed in {head}.")
    prompt = str(stack.llm.requests[-1]["messages"])
    assert all(ask in prompt for ask in ASKS) and "return a - b" in prompt
    assert all(f"(id {thread})" in prompt for thread in threads)


def test_a_review_by_someone_who_may_not_push_is_refused_without_replies(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    _, bare = widgets(github_api, git_server)
    head = "resolver/7-fix-add"
    run_git("--git-dir", str(bare), "branch", head, "main")
    pull = github_api.add_pull(REPO, head, "main", "Fix add()", BOT_LOGIN)
    thread = github_api.add_review_comment(
        REPO, pull.number, "rename this", "dave", "calc.py", 2, HUNK, REVIEW_ID
    )
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("dave", "github", "6001", "dave")
        stack.llm.set_script(by_step([finish("answered", "should not run")]))
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        review = review_submitted(
            git_server,
            number=pull.number,
            head=head,
            review_id=REVIEW_ID,
            login="dave",
            user_id=6001,
        )
        job_id = int(post(client, github("pull_request_review.submitted", review)).json()["job_id"])
        job = stack.wait_finished(job_id)
        stack.wait_callbacks_settled()

    assert job.outcome == "refused" and not stack.llm.requests
    bot_replies = [c for c in github_api.review_comments.values() if c.login == BOT_LOGIN]
    assert bot_replies == [] and thread in github_api.review_comments
    refusals = [c.body for c in github_api.comments.values() if c.login == BOT_LOGIN]
    assert any("dave" in body for body in refusals)
