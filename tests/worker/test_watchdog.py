"""The watchdog ends what is stuck, each with a status message the requester sees."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

import integrations.github.provider  # noqa: F401  (registers the provider the jobs come from)
from resolver.callbacks.record import view_of
from resolver.callbacks.status import render
from resolver.contract.outbound import OPEN_PULL, STATUS
from resolver.core.settings import get_settings
from resolver.core.states import JobState
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback, Job, utcnow
from resolver.worker import watchdog
from resolver.worker.reconcile import reconcile


def new_job(**fields: object) -> int:
    with session_scope() as session:
        spec = jobs.NewJob(source="github", task="fix it", repo="o/r", requester="ada")
        job = jobs.create_job(session, spec)
        for name, value in fields.items():
            setattr(job, name, value)
        return job.id


def sweep() -> list[int]:
    with session_scope() as session:
        return watchdog.sweep(session, get_settings())


def shown(job_id: int) -> str:
    with session_scope() as session:
        return render(view_of(session, jobs.get_job(session, job_id), get_settings()))


def status_callbacks(job_id: int) -> list[Callback]:
    with session_scope() as session:
        found = session.scalars(
            select(Callback).where(Callback.job_id == job_id, Callback.action == STATUS)
        )
        return [callback for callback in found if session.expunge(callback) is None]


def test_a_job_whose_worker_kept_dying_ends_failed(resolver_env, backend) -> None:
    dying = new_job(
        state=JobState.RUNNING, attempts=3, lease_expires_at=utcnow() - timedelta(seconds=1)
    )
    again = new_job(
        state=JobState.RUNNING, attempts=1, lease_expires_at=utcnow() - timedelta(seconds=1)
    )
    published = sweep()
    with session_scope() as session:
        assert jobs.get_job(session, dying).state == JobState.FAILED
        assert jobs.get_job(session, again).state == JobState.RUNNING  # the reconciler retries it
    assert "stopped 3 times" in shown(dying) and "❌ **Failed.**" in shown(dying)
    assert published and [c.id for c in status_callbacks(dying)] == published


def test_a_job_queued_too_long_expires(resolver_env, backend) -> None:
    old = new_job(created_at=utcnow() - timedelta(hours=7))
    young = new_job()
    sweep()
    with session_scope() as session:
        assert jobs.get_job(session, old).outcome == "expired"
        assert jobs.get_job(session, young).state == JobState.QUEUED
    assert shown(old).startswith("⌛ **Expired.**") and status_callbacks(old)


def test_a_pull_request_that_could_not_be_opened_is_said_so(resolver_env, backend) -> None:
    job_id = new_job(
        state=JobState.SUCCEEDED,
        outcome="changed_code",
        branch="resolver/1-fix",
        result={"pull_pending": True},
        finished_at=utcnow(),
    )
    with session_scope() as session:
        session.add(
            Callback(
                provider="github",
                action=OPEN_PULL,
                payload={"job_id": job_id},
                job_id=job_id,
                state="failed",
                error="HTTP 403: Resource not accessible by integration",
                finished_at=utcnow(),
            )
        )
    assert sweep()
    assert "could not be opened: HTTP 403" in shown(job_id)
    assert sweep() == []  # once


def test_a_final_status_that_failed_is_posted_again_a_few_times(resolver_env, backend) -> None:
    job_id = new_job(state=JobState.FAILED, outcome="error", finished_at=utcnow())

    def failed_status(ago: timedelta) -> None:
        with session_scope() as session:
            session.add(
                Callback(
                    provider="github",
                    action=STATUS,
                    payload={"job_id": job_id},
                    job_id=job_id,
                    state="failed",
                    finished_at=utcnow() - ago,
                )
            )

    failed_status(timedelta(seconds=1))
    assert sweep() == []  # too soon after the failure
    for rounds in range(watchdog.STATUS_ROUNDS):
        with session_scope() as session:
            session.execute(
                Callback.__table__.update()
                .where(Callback.job_id == job_id)
                .values(state="failed", finished_at=utcnow() - timedelta(hours=1))
            )
        assert len(sweep()) == 1, rounds
    assert sweep() == []
    with session_scope() as session:
        assert session.get(Job, job_id).result["status_rounds"] == watchdog.STATUS_ROUNDS


def test_a_row_the_sweep_cannot_read_is_passed_over_and_the_repair_goes_on(
    resolver_env, backend
) -> None:
    """A result written by a newer release (after a rollback) does not read: the job whose
    worker kept dying still ends, without its messages, and so does the one beside it; the
    reconciler still sends a queued job whose message was lost."""
    unreadable = new_job(
        state=JobState.RUNNING,
        attempts=3,
        lease_expires_at=utcnow() - timedelta(seconds=1),
        result={"v": 2},
    )
    dying = new_job(
        state=JobState.RUNNING, attempts=3, lease_expires_at=utcnow() - timedelta(seconds=1)
    )
    lost = new_job(created_at=utcnow() - timedelta(minutes=10))
    for expected in ([lost], []):  # a pass after the first finds its message waiting
        with session_scope() as session:
            assert reconcile(session, get_settings()) == expected
    with session_scope() as session:
        assert jobs.get_job(session, unreadable).state == JobState.FAILED
        assert jobs.get_job(session, dying).state == JobState.FAILED
    assert status_callbacks(unreadable) == [] and status_callbacks(dying)
