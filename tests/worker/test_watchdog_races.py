"""The watchdog's sweep while a worker or a person changes a job it read: the other side runs,
to its commit, between the sweep's read of the jobs it ends and its write, on SQLite and
PostgreSQL. The sweep reads the job again under its lock and passes over one that no longer
qualifies."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest

from resolver.callbacks import record
from resolver.core.job import RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import utcnow
from resolver.worker import execute
from tests.worker.test_watchdog import new_job, status_callbacks, sweep

SUMMARY = "Renamed the helper and updated its three callers."
DONE = RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"summary": SUMMARY})


def _after_the_read(monkeypatch: pytest.MonkeyPatch, name: str, other: Callable[[], None]) -> None:
    """Run `other` in a thread of its own, to its end, once the sweep has read its jobs with
    `jobs.name` and before it ends them."""
    real = getattr(jobs, name)

    def read_then_the_other(*args, **kwargs):
        found = real(*args, **kwargs)
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(60)
        return found

    monkeypatch.setattr(jobs, name, read_then_the_other)


def _job_of(job_id: int) -> jobs.Job:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        session.expunge(job)
        return job


def _old_queued() -> int:
    return new_job(created_at=utcnow() - timedelta(hours=7))


def test_a_job_a_worker_takes_as_it_expires_runs_and_its_end_is_recorded(
    resolver_env, backend, monkeypatch
) -> None:
    job_id = _old_queued()

    def take() -> None:
        with session_scope() as session:
            assert jobs.take_lease(session, job_id, "worker-1", 60)

    _after_the_read(monkeypatch, "queued_before", take)

    told = sweep()
    job = _job_of(job_id)
    assert (job.state, job.lease_owner, job.outcome) == ("running", "worker-1", None)
    assert told == []
    execute._record(job_id, "worker-1", DONE, get_settings())
    job = _job_of(job_id)
    assert (job.state, job.result.get("summary")) == ("succeeded", SUMMARY)


def test_a_job_stopped_as_it_expires_stays_stopped(resolver_env, backend, monkeypatch) -> None:
    job_id = _old_queued()

    def stop() -> None:
        with session_scope() as session:
            assert record.stop_job(session, jobs.get_job(session, job_id), "wendy")

    _after_the_read(monkeypatch, "queued_before", stop)

    told = sweep()
    job = _job_of(job_id)
    assert (job.state, job.outcome, job.error) == ("cancelled", "cancelled", None)
    assert told == []
    assert job.result.get("stopped_by") == "wendy"
    assert len(status_callbacks(job_id)) == 1  # the stop's, and no "expired" after it


def test_a_job_whose_slow_worker_records_its_end_as_it_is_given_up_keeps_its_end(
    resolver_env, backend, monkeypatch
) -> None:
    job_id = new_job(
        state=JobState.RUNNING,
        attempts=3,
        lease_owner="worker-1",
        lease_expires_at=utcnow() - timedelta(seconds=1),
    )
    end = lambda: execute._record(job_id, "worker-1", DONE, get_settings())  # noqa: E731
    _after_the_read(monkeypatch, "exhausted_jobs", end)

    told = sweep()
    job = _job_of(job_id)
    assert (job.state, job.outcome, job.error) == ("succeeded", "answered", None)
    assert job.result.get("summary") == SUMMARY and told == []
