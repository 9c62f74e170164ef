"""A review batch's thread replies: each says what the job did in that thread (the model's own
words, with the commit it pushed; else where the change is, or why there is none), and asks to
resolve its thread only when the repository allows it and the job pushed a commit."""

from __future__ import annotations

from typing import Any

import pytest

from resolver.core.states import JobState, Outcome
from resolver.features.reviews.callbacks import record_thread_replies, render_thread_reply
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback, Job
from tests.conftest import ResolverEnv

THREADS = [{"id": "d1", "where": {"discussion_id": "d1", "note_type": "DiffNote"}}]
SHA = "c0ffee" * 6 + "c0ff"
LINK = "http://resolver.test/jobs/1"


@pytest.mark.parametrize(
    ("said", "outcome", "reply"),
    [
        ("  Added a docstring.\n", Outcome.CHANGED_CODE, f"Added a docstring.\n\nIn {SHA}."),
        ("", Outcome.CHANGED_CODE, f"Addressed in {SHA}."),
        (None, Outcome.CHANGED_CODE, f"Addressed in {SHA}."),
        ("It is tested in test_calc.py.", Outcome.ANSWERED, "It is tested in test_calc.py."),
        (
            None,
            Outcome.NO_CHANGES,
            f"I made no change for this thread (the job found nothing to change). Details: {LINK}",
        ),
    ],
    ids=["own-words", "empty-words", "no-words", "answered", "no-change"],
)
def test_a_thread_is_answered_in_the_models_words_or_with_where_the_change_is(
    said: str | None, outcome: Outcome, reply: str
) -> None:
    pushed = {"pushed_sha": SHA} if outcome == Outcome.CHANGED_CODE else {}
    job = Job(state=JobState.SUCCEEDED, outcome=outcome, result=pushed)
    assert render_thread_reply(job, said, LINK) == reply


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
