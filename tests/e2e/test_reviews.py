"""End to end, on each forge: a review of the bot's own pull (request) is one job that takes every
open thread (not one a person resolved), pushes once, replies in each, and resolves them only
where the repository's default branch allows it; on GitHub, someone who may not push is
refused. A resolve GitHub's GraphQL API refuses: test_github_review_resolve.py.

The words of each reply and when a reply asks to resolve are decided without a stack
(tests/features/reviews/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from integrations.standin.git_http import run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from tests.conftest import ResolverEnv
from tests.e2e.forges import Forge, GitHubForge
from tests.e2e.github_flow import review_submitted
from tests.e2e.reviews_flow import (
    ASKS,
    BRANCH,
    DONE,
    HUNK,
    RESOLVING,
    REVIEW_ID,
    GitHubThreads,
    documents_add,
    threads_of,
)
from tests.e2e.stack import REPO_FILES, by_step, ingress, running_stack
from tests.integrations.deliveries import github, post
from tests.integrations.github.conftest import REPO
from tests.support.llm_server import finish

pytestmark = pytest.mark.timeout(420)


@pytest.mark.parametrize("config", [None, RESOLVING], ids=["left-open", "resolved"])
def test_a_review_is_one_job_three_replies_one_push_and_resolves_only_when_allowed(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forge: Forge,
    config: str | None,
) -> None:
    bare = forge.widgets({**REPO_FILES, **({".resolver/config.yml": config} if config else {})})
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    number = forge.bots_pull(BRANCH)
    on = threads_of(forge)
    threads = [on.open(number, ask) for ask in ASKS]
    done = on.open(number, DONE, resolved=True)
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.llm.set_script(by_step(documents_add(threads)))
        forge.start(stack)
        job = stack.job(on.ask(stack, monkeypatch, number, mentioned=threads[1]))
        with session_scope() as session:
            jobs = session.scalars(select(Job.id)).all()
        prompt = str(stack.llm.requests[-1]["messages"])

    assert job.outcome == "changed_code", job.error
    assert job.branch == BRANCH and forge.pull_count() == 1
    assert jobs == [job.id]  # the review's deliveries made one job
    head = run_git("--git-dir", str(bare), "rev-parse", BRANCH).strip()
    commits = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{BRANCH}")
    assert len(commits.splitlines()) == 1  # one push
    replies = on.bot_replies()
    assert len(replies) == 3 and {thread for thread, _ in replies} == set(threads)
    said = dict(replies)
    assert said[threads[0]].startswith("Added a docstring.") and head in said[threads[0]]
    assert said[threads[1]].startswith(f"Addressed in {head}.")
    assert said[threads[2]].startswith(f"Addressed in {head}.")
    assert done not in said
    assert all(ask in prompt for ask in ASKS) and DONE not in prompt
    assert all(f"(id {thread})" in prompt for thread in threads)
    assert sorted(on.resolved_by_bot()) == (sorted(threads) if config else [])


@pytest.mark.parametrize("forge", ["github"], indirect=True)
def test_a_review_by_someone_who_may_not_push_is_refused_without_replies(
    resolver_env: ResolverEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: Forge
) -> None:
    assert isinstance(forge, GitHubForge)
    bare = forge.widgets()
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    number = forge.bots_pull(BRANCH)
    thread = forge.api.add_review_comment(
        REPO, number, "rename this", "dave", "calc.py", 2, HUNK, REVIEW_ID
    )
    with running_stack(resolver_env, tmp_path, **forge.settings()) as stack:
        stack.link("dave", "github", "6001", "dave")
        stack.llm.set_script(by_step([finish("answered", "should not run")]))
        stack.start_worker()
        review = review_submitted(
            forge.git, number=number, head=BRANCH, review_id=REVIEW_ID, login="dave", user_id=6001
        )
        answer = post(ingress(stack, monkeypatch), github("pull_request_review.submitted", review))
        job = stack.wait_finished(int(answer.json()["job_id"]))
        stack.wait_callbacks_settled()

    assert job.outcome == "refused" and not stack.llm.requests
    assert GitHubThreads(forge).bot_replies() == [] and thread in forge.api.review_comments
    assert any("dave" in body for body in forge.said_on_pull(number))
