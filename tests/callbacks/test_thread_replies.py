"""A review batch's thread replies: each asks to resolve its thread only when the repository
allows it and the job pushed a commit."""

from __future__ import annotations

from typing import Any

import pytest

from resolver.callbacks.reviews import record_thread_replies
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback
from tests.conftest import ResolverEnv

THREADS = [{"id": "d1", "where": {"discussion_id": "d1", "note_type": "DiffNote"}}]


@pytest.mark.parametrize(
    ("allowed", "outcome", "sha", "resolve"),
    [
        (True, Outcome.CHANGED_CODE, "a" * 40, True),
        (False, Outcome.CHANGED_CODE, "a" * 40, False),
        (True, Outcome.ANSWERED, None, False),
        (True, Outcome.NO_CHANGES, None, False),
    ],
)
def test_a_thread_is_resolved_only_when_allowed_and_pushed(
    resolver_env: ResolverEnv, allowed: bool, outcome: Outcome, sha: str | None, resolve: bool
) -> None:
    result: dict[str, Any] = {"review_threads": THREADS, "resolve_threads": allowed}
    if sha:
        result["pushed_sha"] = sha
    with session_scope() as session:
        job = jobs.create_job(session, jobs.NewJob(source="gitlab", task="review"))
        job.state, job.outcome, job.result = JobState.SUCCEEDED, outcome, result
        [callback_id] = record_thread_replies(session, job, (), "http://resolver.test/jobs/1")
        payload = session.get(Callback, callback_id).payload  # type: ignore[union-attr]
    assert payload["where"] == THREADS[0]["where"] and payload["resolve"] is resolve
