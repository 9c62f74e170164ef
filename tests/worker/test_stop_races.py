"""`@bot stop` and the worker's record of a job's end, each while the other happens: the other
side runs, to its commit, in the window between one's read of the job and its write, on SQLite
and PostgreSQL. (The web's Stop: tests/web/test_stop_races.py.)"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from sqlalchemy import select

from resolver.callbacks import record
from resolver.contract.callbacks import Reply, read_payload
from resolver.core.job import RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs, slots
from resolver.store.accounts import add_user
from resolver.store.db import session_scope
from resolver.store.models import Callback
from resolver.worker import execute
from resolver.worker.commands import answer_stop
from resolver.worker.request import load
from tests.worker.test_steering import job_of, new_job

SUMMARY = "Renamed the helper and updated its three callers."
DONE = RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"summary": SUMMARY})


def _first(monkeypatch: pytest.MonkeyPatch, module: object, name: str, other: Callable[[], None]):
    """Run `other` in a thread of its own, to its end, whenever `module.name` is called and
    before it runs."""
    real = getattr(module, name)

    def first_the_other(*args, **kwargs):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, first_the_other)


@pytest.fixture
def running(resolver_env, backend) -> int:
    """alice's job, which worker-1 runs."""
    with session_scope() as session:
        alice = add_user(session, "alice").id
    job_id = new_job("fix add()", alice)
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, "worker-1", 60)
    return job_id


def _reply_of(job_id: int) -> str:
    with session_scope() as session:
        [payload] = session.scalars(
            select(Callback.payload).where(Callback.job_id == job_id, Callback.action == "reply")
        )
        return read_payload(Reply, payload).text


def test_at_bot_stop_as_the_job_ends_leaves_its_result_and_says_it_ended(
    running, monkeypatch
) -> None:
    end = lambda: execute._record(running, "worker-1", DONE, get_settings())  # noqa: E731
    _first(monkeypatch, record, "stop_job", end)
    stop = new_job("stop", job_of(running).requester_id)

    with session_scope() as session:
        answer_stop(session, load(session, stop), get_settings())

    job = job_of(running)
    assert (job.state, job.result.get("summary"), job.cancel_requested) == (
        "succeeded",
        SUMMARY,
        False,
    )
    assert _reply_of(stop) == f"Job {running} has already ended (succeeded)."


def test_the_end_recorded_as_a_stop_is_noted_keeps_the_note(running, monkeypatch) -> None:
    def stop() -> None:
        with session_scope() as session:
            record.stop_job(session, jobs.get_job(session, running), "wendy")

    # The worker has read the job; the stop commits before the worker writes its end.
    _first(monkeypatch, slots, "hold_slots", stop)

    execute._record(running, "worker-1", DONE, get_settings())

    job = job_of(running)
    assert (job.state, job.result.get("summary")) == ("succeeded", SUMMARY)
    assert job.cancel_requested and job.result.get("stopped_by") == "wendy"
