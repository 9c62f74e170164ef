"""The beat's housekeeping (worker/reconcile.py) on the test database and Redis, without a
worker: a queued job whose message is gone is sent again, one whose message waits is not, a
running job whose lease ran out is sent again, and a callback long past due is re-sent."""

from __future__ import annotations

from datetime import timedelta

import redis
from sqlalchemy import update

from resolver.broker.outbox import waiting_job_messages
from resolver.broker.publish import acknowledge_message, send_messages
from resolver.core.settings import get_settings
from resolver.core.states import JobState
from resolver.store import jobs
from resolver.store.callbacks import record_callback
from resolver.store.db import session_scope
from resolver.store.models import Job, utcnow
from resolver.worker.reconcile import reconcile
from tests.broker.test_outbox import drain
from tests.conftest import TEST_REDIS, ResolverEnv
from tests.support.scripted_post import ScriptedPost

LONG_AGO = timedelta(minutes=10)


def queued_job(published: bool = False) -> int:
    """A queued job created (and, when `published`, sent) long ago."""
    with session_scope() as session:
        job = jobs.create_job(session, jobs.NewJob(source="github", task="fix it"))
        job.created_at = utcnow() - LONG_AGO
        if published:
            job.published_at = utcnow() - LONG_AGO
        return job.id


def message_of(job_id: int) -> str:
    with session_scope() as session:
        return str(jobs.get_job(session, job_id).message_id)


def run_reconcile() -> list[int]:
    with session_scope() as session:
        return reconcile(session, get_settings())


def test_a_queued_job_whose_message_is_gone_is_sent_again(resolver_env: ResolverEnv) -> None:
    job_id = queued_job(published=True)
    old = message_of(job_id)
    assert run_reconcile() == [job_id]
    new = message_of(job_id)
    assert new != old
    assert waiting_job_messages(get_settings().redis_url) == {new}


def test_a_queued_job_whose_message_waits_is_left_alone(resolver_env: ResolverEnv) -> None:
    job_id = queued_job(published=True)
    run_reconcile()
    waiting = message_of(job_id)
    with session_scope() as session:
        # Published long ago, and its message still in the queue: a busy worker, not a loss.
        session.execute(
            update(Job).where(Job.id == job_id).values(published_at=utcnow() - LONG_AGO)
        )
    assert run_reconcile() == []
    assert message_of(job_id) == waiting


def test_a_queued_job_whose_acknowledgement_waits_is_left_alone(resolver_env: ResolverEnv) -> None:
    """A new job's one message waits on the callbacks queue (busy with 👀s) under the job's
    message id: it sends the job's message once it has sent the 👀."""
    job_id = queued_job()
    send_messages([acknowledge_message(job_id, message_of(job_id))])
    assert run_reconcile() == []
    assert waiting_job_messages(get_settings().redis_url) == {message_of(job_id)}


def test_a_job_within_its_grace_is_not_sent_twice(resolver_env: ResolverEnv) -> None:
    with session_scope() as session:
        jobs.create_job(session, jobs.NewJob(source="github", task="fix it"))
    assert run_reconcile() == []
    assert waiting_job_messages(get_settings().redis_url) == set()


def test_a_running_job_whose_lease_ran_out_is_sent_again(resolver_env: ResolverEnv) -> None:
    job_id = queued_job()
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, "worker-gone", 60)
        job = jobs.get_job(session, job_id)
        job.lease_expires_at = utcnow() - timedelta(seconds=1)
        job.started_at = utcnow()
    assert run_reconcile() == [job_id]
    with session_scope() as session:
        assert jobs.get_job(session, job_id).state == JobState.RUNNING  # the lease decides
    assert waiting_job_messages(get_settings().redis_url) == {message_of(job_id)}


def test_a_callback_long_past_due_is_sent_again(resolver_env: ResolverEnv) -> None:
    with session_scope() as session:
        stalled = record_callback(session, "github", ScriptedPost())
        stalled.due_at = utcnow() - LONG_AGO
        record_callback(session, "github", ScriptedPost())
        stalled_id = stalled.id
    run_reconcile()
    sent = [
        envelope["headers"]["argsrepr"]
        for envelopes in drain(redis.Redis.from_url(TEST_REDIS)).values()
        for envelope in envelopes
    ]
    assert sent == [f"[{stalled_id}]"]
