"""Stop pressed while a worker changes the job: between the page reading the job and its stop,
a worker records the job's end, or claims it, or someone else stops it. The window is made
certain: the other side runs, to its commit, just before the stop (as the audit's probes
widened it), on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from resolver.callbacks import record
from resolver.core.job import JobContext, RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Job
from resolver.worker import execute
from tests.store.test_storage import new_job
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in
from tests.web.test_buttons import _status_callbacks

SUMMARY = "Renamed the helper and updated its three callers."


def _before_the_stop(monkeypatch: pytest.MonkeyPatch, other_side: Callable[[], None]) -> None:
    """Run `other_side` in a thread of its own, to its end, once the page has read and
    checked the job and before it stops it."""
    real = record.stop_job

    def stop_job(session, job, by, account=None):
        thread = threading.Thread(target=other_side)
        thread.start()
        thread.join(60)
        return real(session, job, by, account)

    monkeypatch.setattr(record, "stop_job", stop_job)


def _press_stop(app, forge, job_id: int, login: str = "wendy") -> str:
    """Press Stop on the job's page as `login`; what the page then says."""
    client = browser(app)
    sign_in(client, forge, login)
    stopped = client.post(f"/jobs/{job_id}/stop", data={"csrf": csrf_of(client, f"/jobs/{job_id}")})
    assert stopped.status_code == 303
    return client.get(stopped.headers["location"]).text


def _job_of(job_id: int) -> Job:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        session.expunge(job)
        return job


def _running(owner: str) -> int:
    job_id = new_job(repo=SECRET_REPO, task="update the docs")
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, owner, 60)
    return job_id


def test_stop_pressed_as_the_worker_records_the_end_leaves_the_result(
    app, forge, backend, monkeypatch
) -> None:
    job_id = _running("worker-1")
    done = RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"summary": SUMMARY})
    _before_the_stop(monkeypatch, lambda: execute._record(job_id, "worker-1", done, get_settings()))

    page = _press_stop(app, forge, job_id)

    job = _job_of(job_id)
    assert (job.state, job.result.get("summary")) == ("succeeded", SUMMARY)
    assert not job.cancel_requested and "stopped_by" not in job.result
    assert f"Job {job_id} has already ended (succeeded)." in page


def test_stop_pressed_as_a_worker_claims_the_job_stops_it_through_the_worker(
    app, forge, backend, monkeypatch
) -> None:
    job_id = new_job(repo=SECRET_REPO, task="update the docs")
    started = threading.Event()

    def runner(_session, ctx: JobContext) -> RunResult:
        started.set()
        assert ctx.cancelled.wait(30), "the stop reaches the runner at its next heartbeat"
        return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"summary": SUMMARY})

    worker = threading.Thread(
        target=execute.execute, args=(job_id, lambda _source: runner, get_settings())
    )
    _before_the_stop(monkeypatch, lambda: (worker.start(), started.wait(30)))

    page = _press_stop(app, forge, job_id)
    worker.join(60)

    job = _job_of(job_id)
    # The worker recorded the end (with its lease), not the page over the worker's run.
    assert (job.state, job.outcome, job.lease_owner) == ("cancelled", "cancelled", None)
    assert job.result.get("summary") == SUMMARY and job.result["stopped_by"] == "wendy"
    assert "Stopping: the job stops at its next step." in page


def test_stop_pressed_by_two_people_stops_the_job_once(app, forge, backend, monkeypatch) -> None:
    job_id = new_job(repo=SECRET_REPO, task="update the docs")
    first = record.stop_job

    def root_stops_it() -> None:
        with session_scope() as session:
            assert first(session, jobs.get_job(session, job_id), "root") is not None

    _before_the_stop(monkeypatch, root_stops_it)

    page = _press_stop(app, forge, job_id)

    job = _job_of(job_id)
    assert (job.state, job.result["stopped_by"]) == ("cancelled", "root")
    assert f"Job {job_id} has already ended (cancelled)." in page
    assert len(_status_callbacks(job_id)) == 1
