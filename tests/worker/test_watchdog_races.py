"""The watchdog's sweep while a worker or a person changes a job it read: the other side runs,
to its commit, between the sweep's read of the jobs it ends and its write, on SQLite and
PostgreSQL. The sweep reads the job again under its lock and passes over one that no longer
qualifies."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest

from resolver.callbacks import actions, record
from resolver.contract.callbacks import PullToOpen
from resolver.contract.outbound import OPEN_PULL, STATUS
from resolver.core.job import RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import bot_pulls, jobs
from resolver.store import callbacks as store_callbacks
from resolver.store.db import session_scope
from resolver.store.models import Callback, utcnow
from resolver.worker import execute, watchdog
from tests.callbacks.test_actions import NAME, REPO, act, forge_job, set_job, sixth
from tests.worker.test_watchdog import new_job, shown, status_callbacks, sweep

__all__ = ["sixth"]  # the fixture, used by name

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


# The pull request: its opening (`send_open_pull`) and the sweep's writes of the same result.


def _pending_pull(failed: str) -> int:
    """A finished job whose pull request is being opened, with a callback of `failed` that
    failed for good an hour ago."""
    job_id = forge_job()
    set_job(job_id, outcome="changed_code", finished_at=utcnow())
    set_job(job_id, result={"summary": "Fixed the race.", "pull_pending": True})
    with session_scope() as session:
        ago = utcnow() - timedelta(hours=1)
        failing = Callback(provider=NAME, action=failed, payload={"job_id": job_id}, job_id=job_id)
        failing.state, failing.error, failing.finished_at = "failed", "HTTP 502", ago
        session.add(failing)
    return job_id


def _open(job_id: int) -> Callable[[], None]:
    return lambda: act(actions.send_open_pull, PullToOpen(job_id=job_id)) and None


def _pull_of(job_id: int) -> tuple[object, ...]:
    job = _job_of(job_id)
    return (
        job.pr_url,
        *(job.result.get(key) for key in ("pull_pending", "pull_number", "pull_error")),
    )


OPENED = (f"https://forge.test/{REPO}/pull/100", False, 100, None)


def test_a_status_reposted_as_the_pull_request_opens_keeps_its_number(
    sixth, backend, monkeypatch
) -> None:
    job_id = _pending_pull(STATUS)
    real, calls = watchdog._newest_status, []

    def newest_then_the_pull_opens(session, job):  # the sweep has read the job and checked it
        newest = real(session, job)
        if not calls:
            calls.append(job.id)
            thread = threading.Thread(target=_open(job_id))
            thread.start()
            thread.join(60)
        return newest

    monkeypatch.setattr(watchdog, "_newest_status", newest_then_the_pull_opens)

    sweep()
    assert _pull_of(job_id) == OPENED


def test_a_pull_request_opened_as_its_failure_is_reported_is_not_said_failed(
    sixth, backend, monkeypatch
) -> None:
    job_id = _pending_pull(OPEN_PULL)
    real = store_callbacks.recently_failed

    def read_then_the_pull_opens(session, action, since):
        found = real(session, action, since)
        if action == OPEN_PULL:
            thread = threading.Thread(target=_open(job_id))
            thread.start()
            thread.join(60)
        return found

    monkeypatch.setattr(store_callbacks, "recently_failed", read_then_the_pull_opens)

    sweep()
    assert _pull_of(job_id) == OPENED
    assert "could not be opened" not in shown(job_id)


def test_a_pull_request_opened_as_a_status_is_reposted_keeps_the_reposts_round(
    sixth, backend, monkeypatch
) -> None:
    """The sweep runs once the opening has read the job again and before it commits: it commits
    first (before the fix), or waits for the opening's lock and then reads what it wrote."""
    job_id = _pending_pull(STATUS)
    real, swept = bot_pulls.apply, []
    sweeping = threading.Thread(target=lambda: swept.append(sweep()))

    def the_sweep_then_apply(session, provider, change):
        sweeping.start()
        sweeping.join(2)  # it waits for the opening's lock, with the fix: let it wait
        real(session, provider, change)

    monkeypatch.setattr(bot_pulls, "apply", the_sweep_then_apply)
    assert act(actions.send_open_pull, PullToOpen(job_id=job_id)).number == 100
    sweeping.join(60)

    assert _pull_of(job_id) == OPENED
    [told] = swept
    assert told == [] or _job_of(job_id).result.get("status_rounds") == 1
