"""A review batch end to end on Azure DevOps, with the stack: alice mentions the bot in three
threads of its own pull request, the third late in the window, while its job waits for the
window to close; the three deliveries are one job, which takes all three threads, pushes once
and replies in each (the model's words where it gave some, else the commit), then resolves
them, as the repository's `reviews: {resolve_threads: true}` allows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from integrations.azuredevops.routes import REVIEW_WINDOW
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.standin.git_http import GitHttpServer, run_git
from resolver.store.db import session_scope
from resolver.store.models import Job
from tests.conftest import ResolverEnv
from tests.e2e.conflicts_flow import commit_to
from tests.e2e.reviews_flow import RESOLVING
from tests.e2e.stack import by_step, ingress, running_stack
from tests.integrations.azuredevops.flow import (
    BOT,
    azure_git,
    azure_standin,
    delivery,
    pull_comment,
    settings,
    widgets,
)
from tests.integrations.deliveries import post
from tests.support.llm_server import Reply, tool

__all__ = ["azure_git", "azure_standin"]
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
BRANCH = "resolver/7-fix-add"
DOCSTRING = '    """Add two numbers."""\n'
ASKS = (
    "@resolver please document add()",
    "@resolver name the parameters better",
    "@resolver is this tested?",
)
LINE = {"filePath": "/calc.py", "rightFileStart": {"line": 2, "offset": 1}}
# Seconds from the first mention, posted once the worker is ready, to the window's end: room for
# the job to start (its first loads the agent: 15 s at a load of 14 on 2 cores) and reach its
# wait, which the third mention then arrives in.
GATHERING = 25
READ_THREADS = (
    "GET /{organization}/{project}/_apis/git/repositories/{repositoryId}/pullRequests"
    "/{pullRequestId}/threads"
)


def documents_add(first_thread: str) -> list[Reply]:
    return [
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
            threads={first_thread: "Added a docstring."},
        ),
    ]


def window_start() -> datetime:
    """A published time whose window closes GATHERING seconds from now, with room in it for
    three comments a second apart."""
    published = datetime.now(UTC) - REVIEW_WINDOW + timedelta(seconds=GATHERING)
    if published.timestamp() % REVIEW_WINDOW.total_seconds() > REVIEW_WINDOW.total_seconds() - 3:
        published -= timedelta(seconds=3)
    return published


def test_three_mentions_in_a_window_are_one_job_that_answers_every_thread(
    resolver_env: ResolverEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    azure_standin: AzureDevOpsAPI,
    azure_git: GitHttpServer,
) -> None:
    api = azure_standin
    repo, bare = widgets(api, azure_git)
    commit_to(bare, "main", {".resolver/config.yml": RESOLVING}, "Resolve review threads")
    run_git("--git-dir", str(bare), "branch", BRANCH, "main")
    bot, alice = api.add_person(BOT), api.add_person("alice@contoso.com")
    pull = api.add_pull(repo, BRANCH, bot, title="Fix add()", is_draft=True)

    with running_stack(resolver_env, tmp_path, **settings(api)) as stack:
        stack.link("alice", "azuredevops", alice.id, "alice")
        stack.start_worker()
        client = ingress(stack, monkeypatch)
        stack.wait(lambda: " ready." in stack.logs(), 120, "the worker")
        start = window_start()
        late = start + REVIEW_WINDOW - timedelta(seconds=3)

        def read_or_late() -> bool:
            return bool(api.calls(READ_THREADS)) or datetime.now(UTC) > late

        answers, threads = [], []
        for n, ask in enumerate(ASKS):
            if n == 2:  # the third, late in the window: a job that did not wait has read it
                stack.wait(read_or_late, 90, "the threads read, or the window's end near")
            published = start + timedelta(seconds=n)
            at = LINE if n == 0 else None
            payload = pull_comment(api, repo, pull, alice, ask, published=published, context=at)
            threads.append(pull.threads[-1].id)
            if n == 0:
                stack.llm.set_script(by_step(documents_add(str(threads[0]))))
            answers.append(post(client, delivery(payload)))
            job_id = int(answers[0].json()["job_id"])
        job = stack.wait_finished(job_id)
        stack.wait_callbacks_settled()
        with session_scope() as session:
            jobs = session.scalars(select(Job.id)).all()
        prompt = str(stack.llm.requests[0]["messages"])

    assert [a.status_code for a in answers] == [202, 200, 200], [a.text for a in answers]
    assert {int(a.json()["job_id"]) for a in answers} == {job_id} and jobs == [job_id]
    assert (job.state, job.outcome) == ("succeeded", "changed_code"), job.error
    assert all(ask.removeprefix("@resolver ") in prompt for ask in ASKS)
    assert all(f"(id {thread})" in prompt for thread in threads)
    assert "calc.py" in prompt
    commits = run_git("--git-dir", str(bare), "log", "--format=%s", f"main..{BRANCH}")
    assert len(commits.splitlines()) == 1  # one push
    head = run_git("--git-dir", str(bare), "rev-parse", BRANCH).strip()
    replies = {
        t.id: [c.content for c in t.comments[1:] if c.author == bot.id]
        for t in pull.threads
        if t.id in threads
    }
    assert [len(replies[t]) for t in threads] == [1, 1, 1]
    assert replies[threads[0]][0].startswith("Added a docstring.")
    assert head in replies[threads[0]][0]
    assert all(replies[t][0].startswith(f"Addressed in {head}.") for t in threads[1:])
    assert bot.id in pull.threads[0].comments[0].likes  # the first mention is acknowledged
    # The repository allows it: each thread the pushed commit addressed is resolved, by the bot.
    assert sorted(api.statuses) == sorted((t, "fixed", bot.id) for t in threads)
