"""GitHub end to end: a review batch that pushed resolves its threads over GraphQL where the
default branch's `.resolver/config.yml` says `reviews: {resolve_threads: true}`, and leaves them
open without it; a GraphQL error leaves the replies posted and says the resolve failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo, run_git
from resolver.contract.outbound import THREAD_REPLY
from resolver.store.db import session_scope
from resolver.web.pages import thread_failures
from tests.conftest import ResolverEnv
from tests.e2e.github_flow import (
    ALICE_ID,
    github_settings,
    issue_comment,
    review_submitted,
)
from tests.e2e.stack import REPO_FILES, by_step, fix_script, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import tool

pytestmark = pytest.mark.timeout(420)

HUNK = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b"
REVIEW_ID = 880002
ASKS = ("please document add()", "name the parameters better", "is this tested?")
RESOLVING = "reviews:\n  resolve_threads: true\n"
REFUSAL = "Resource not accessible by integration"


@pytest.mark.parametrize(
    ("config", "refused"),
    [(None, False), (RESOLVING, False), (RESOLVING, True)],
    ids=["left-open", "resolved", "graphql-error"],
)
def test_a_review_batch_resolves_its_threads_only_when_allowed(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
    config: str | None,
    refused: bool,
) -> None:
    files = {**REPO_FILES, **({".resolver/config.yml": config} if config else {})}
    bare = create_bare_repo(git_server.root, REPO, files)
    collaborators = {"alice": "write", "dave": "read"}
    github_api.add_repo(REPO, git_server.url_for(REPO), collaborators=collaborators, bare=bare)
    if refused:
        github_api.graphql.refuse("resolveReviewThread", "FORBIDDEN", REFUSAL, times=3)
    with running_stack(resolver_env, tmp_path, **github_settings(github_api, key_file)) as stack:
        stack.link("alice", "github", str(ALICE_ID), "alice")
        stack.llm.set_script(by_step(fix_script()))
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        first = issue_comment(github_api, git_server, "@resolver please fix add()")
        first_id = int(post(client, github("issue_comment.created", first)).json()["job_id"])
        stack.wait_finished(first_id)
        stack.wait_callbacks_settled(first_id)
        [pull] = github_api.pulls
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
                        new_str='def add(a, b):\n    """Add two numbers."""\n',
                    ),
                    tool("finish", outcome="changed_code", summary="Documented add()."),
                ]
            )
        )
        review = review_submitted(
            git_server, number=pull.number, head=pull.head, review_id=REVIEW_ID
        )
        job_id = int(post(client, github("pull_request_review.submitted", review)).json()["job_id"])
        job = stack.wait_finished(job_id)
        stack.wait_callbacks_settled()
        replies = stack.callbacks(job_id)
        with session_scope() as session:
            failures = thread_failures(session, job_id)

    assert job.outcome == "changed_code", job.error
    head = run_git("--git-dir", str(bare), "rev-parse", pull.head).strip()
    commits = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{pull.head}")
    assert len(commits.splitlines()) == 2  # the first job's push and this one's
    bot_replies = {
        c.in_reply_to: c.body
        for c in github_api.review_comments.values()
        if c.login == BOT_LOGIN and c.in_reply_to is not None
    }
    assert set(bot_replies) == set(threads)
    assert all(body.startswith(f"Addressed in {head}.") for body in bot_replies.values())
    thread_replies = [c for c in replies if c.action == THREAD_REPLY]
    assert len(thread_replies) == 3
    if config is None:
        assert github_api.graphql.resolutions == [] and github_api.graphql.resolved == {}
        # GraphQL is read (which threads a person resolved), never asked to resolve one.
        mutations = [c for c in github_api.calls("POST /graphql") if "mutation" in str(c.body)]
        assert mutations == []
        assert all(c.state == "sent" for c in thread_replies) and failures == []
    elif not refused:
        assert github_api.graphql.resolved == dict.fromkeys(threads, BOT_LOGIN)
        assert sorted(github_api.graphql.resolutions) == sorted(
            (f"PRRT_{t}", BOT_LOGIN) for t in threads
        )
        assert all(c.state == "sent" and c.result["resolved"] for c in thread_replies)
        assert failures == []
    else:
        assert github_api.graphql.resolved == {}
        said = "replied in the thread, but could not resolve it: GitHub's GraphQL API refused"
        assert all(c.state == "failed" and said in str(c.error) for c in thread_replies)
        assert all(f"FORBIDDEN: {REFUSAL}" in str(c.error) for c in thread_replies)
        assert len(failures) == 3 and all(said in what for _, what in failures)
