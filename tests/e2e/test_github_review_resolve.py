"""GitHub end to end: a review batch that pushed, where the default branch's `.resolver/config.yml`
says `reviews: {resolve_threads: true}`, and whose resolves GitHub's GraphQL API refuses, leaves
the replies posted and says the resolve failed. Threads resolved, or left open without the
setting, on each forge: test_reviews.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.standin.git_http import GitHttpServer, run_git
from resolver.contract.outbound import THREAD_REPLY
from resolver.store.db import session_scope
from resolver.web.pages import thread_failures
from tests.conftest import ResolverEnv
from tests.e2e.forges import GitHubForge
from tests.e2e.reviews_flow import ASKS, BRANCH, RESOLVING, GitHubThreads, documents_add
from tests.e2e.stack import REPO_FILES, by_step, running_stack

pytestmark = pytest.mark.timeout(420)

REFUSAL = "Resource not accessible by integration"


def test_a_resolve_graphql_refuses_leaves_the_replies_and_says_it_failed(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    github_api: GitHubAPI,
    git_server: GitHttpServer,
    key_file: Path,
) -> None:
    forge = GitHubForge(github_api, git_server, key_file)
    bare = forge.widgets({**REPO_FILES, ".resolver/config.yml": RESOLVING})
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    number = forge.bots_pull(BRANCH)
    on = GitHubThreads(forge)
    threads = [on.open(number, ask) for ask in ASKS]
    github_api.graphql.refuse("resolveReviewThread", "FORBIDDEN", REFUSAL, times=3)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(documents_add(threads)))
        forge.start(stack)
        job_id = on.ask(stack, monkeypatch, number, mentioned=threads[1])
        job = stack.job(job_id)
        replies = stack.callbacks(job_id)
        with session_scope() as session:
            failures = thread_failures(session, job_id)

    assert job.outcome == "changed_code", job.error
    assert {thread for thread, _ in on.bot_replies()} == set(threads)  # replied, not resolved
    assert github_api.graphql.resolved == {}
    said = "replied in the thread, but could not resolve it: GitHub's GraphQL API refused"
    thread_replies = [c for c in replies if c.action == THREAD_REPLY]
    assert len(thread_replies) == 3
    assert all(c.state == "failed" and said in str(c.error) for c in thread_replies)
    assert all(f"FORBIDDEN: {REFUSAL}" in str(c.error) for c in thread_replies)
    assert len(failures) == 3 and all(said in what for _, what in failures)
