"""What an auto-review covers, read from the job rows of its pull request and a real clone: all
of it the first time, only what changed since the last posted review after that, nothing when
the head is the one already reviewed, and nothing after a person stopped a review (until a
review runs again); a review that ended quietly with nothing to do does not count, nor one
whose review the forge never took."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from integrations.standin.git_http import create_bare_repo
from resolver.agent import git as git_repo
from resolver.contract.triggers import Repository, ReviewRequest, dump_trigger
from resolver.core.states import JobState, Outcome
from resolver.features.review_requests.worker import _Quiet, _since
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.worker.values import Snapshot
from tests.conftest import ResolverEnv
from tests.e2e.conflicts_flow import commit_to

KEY = "github:o/r#3"
SUBJECT = ReviewRequest(repo=Repository(full_name="o/r"), number=3, auto=True)


def _job(state: JobState | None = None, head: str | None = None) -> int:
    with session_scope() as session:
        job = jobs.create_job(
            session,
            jobs.NewJob(
                "github", "review", "o/r", trigger=dump_trigger(SUBJECT), conversation_key=KEY
            ),
        )
        if state is not None:
            jobs.transition(job, JobState.RUNNING)
            review = {"summary": "s", "verdict": "comment", "head_sha": head} if head else None
            outcome = Outcome.CANCELLED if state == JobState.CANCELLED else Outcome.ANSWERED
            result = {"review": review} if review else {"quiet": True}
            jobs.finish_job(session, job, state, outcome, result=result)
        return job.id


def _snapshot(job_id: int) -> Snapshot:
    return Snapshot(job_id, "github", "review", "o/r", "alice", None, SUBJECT, None, None)


@pytest.fixture
def commits(resolver_env: ResolverEnv, tmp_path: Path) -> Iterator[tuple[git_repo.Clone, str, str]]:
    bare = create_bare_repo(tmp_path / "git", "o/r", {"a.py": "a = 1\n"})
    first = commit_to(bare, "main", {"a.py": "a = 2\n"}, "two")
    second = commit_to(bare, "main", {"a.py": "a = 3\n"}, "three")
    with git_repo.private_clone(str(bare), tmp_path / "clones", "main") as clone:
        yield clone, first, second


def test_the_first_auto_review_covers_everything(commits: tuple[git_repo.Clone, str, str]) -> None:
    clone, _, second = commits
    assert _since(_job(), _snapshot(_job()), clone, second) is None


def test_after_a_review_only_what_changed_since(commits: tuple[git_repo.Clone, str, str]) -> None:
    clone, first, second = commits
    _job(JobState.SUCCEEDED, first)
    _job(JobState.SUCCEEDED)  # ended quietly: nothing to do
    now = _job()
    assert _since(now, _snapshot(now), clone, second) == first
    _job(JobState.SUCCEEDED, second)
    again = _job()
    with pytest.raises(_Quiet, match="nothing changed"):
        _since(again, _snapshot(again), clone, second)


def test_a_stopped_review_pauses_them_until_one_runs_again(
    commits: tuple[git_repo.Clone, str, str],
) -> None:
    clone, first, second = commits
    _job(JobState.SUCCEEDED, first)
    _job(JobState.CANCELLED)
    _job(JobState.SUCCEEDED)  # a quiet one after the stop does not resume them
    paused = _job()
    with pytest.raises(_Quiet, match="stopped"):
        _since(paused, _snapshot(paused), clone, second)
    _job(JobState.SUCCEEDED, first)  # `@bot review again`
    resumed = _job()
    assert _since(resumed, _snapshot(resumed), clone, second) == first


def test_a_review_the_forge_never_took_does_not_count(
    commits: tuple[git_repo.Clone, str, str],
) -> None:
    clone, first, second = commits
    _job(JobState.SUCCEEDED, first)
    _job(JobState.FAILED, second)  # reviewed, but its review could not be posted
    now = _job()
    assert _since(now, _snapshot(now), clone, second) == first
