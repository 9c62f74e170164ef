"""The beat's housekeeping (worker/reconcile.py) on the test database and Redis, without a
worker: a queued job whose message is gone is sent again, one whose message waits is not, a
running job whose lease ran out is sent again (once, while its new message waits), a callback
long past due is re-sent (unless its message still waits), and parked jobs are sent again only
as far as their caps and conversations allow, in a fixed number of statements however many are
parked."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import update

from resolver.broker.outbox import waiting_job_messages
from resolver.broker.publish import acknowledge_message, publish_callback, send_messages
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs, slots
from resolver.store.accounts import add_user
from resolver.store.callbacks import record_callback
from resolver.store.db import session_scope
from resolver.store.models import Job, utcnow
from resolver.worker.reconcile import reconcile
from tests.broker.test_outbox import drain
from tests.conftest import TEST_REDIS, ResolverEnv, reset_caches
from tests.support.scripted_post import ScriptedPost
from tests.support.statements import counted

LONG_AGO = timedelta(minutes=10)
BOTH = pytest.mark.usefixtures("backend")  # each test on SQLite and on PostgreSQL


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
    # Every worker busy: its new message waits, and no pass adds another.
    assert run_reconcile() == []
    assert run_reconcile() == []
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


def test_a_callback_whose_message_waits_in_a_backed_up_queue_is_not_sent_again(
    resolver_env: ResolverEnv,
) -> None:
    """Late, but its message is still in the queue: each pass added one more copy of it."""
    with session_scope() as session:
        late = record_callback(session, "github", ScriptedPost())
        late.due_at = utcnow() - LONG_AGO
        late_id = late.id
    publish_callback(late_id)
    for _ in range(3):
        run_reconcile()
    sent = [
        envelope["headers"]["argsrepr"]
        for envelopes in drain(redis.Redis.from_url(TEST_REDIS)).values()
        for envelope in envelopes
    ]
    assert sent == [f"[{late_id}]"]


def new_user(name: str = "ada") -> int:
    with session_scope() as session:
        return add_user(session, name).id


def parked(
    count: int = 1,
    requester_id: int | None = None,
    repo: str | None = None,
    conversation: str | None = None,
) -> list[int]:
    """Jobs a worker set aside (parked) long ago, oldest first."""
    new = jobs.NewJob(
        source="github",
        task="fix it",
        requester_id=requester_id,
        repo=repo,
        conversation_key=conversation,
    )
    with session_scope() as session:
        found = [jobs.create_job(session, new) for _ in range(count)]
        for job in found:
            slots.park(session, job)
            job.created_at = job.updated_at = utcnow() - LONG_AGO
        return [job.id for job in found]


def running(requester_id: int | None = None, repo: str | None = None) -> int:
    new = jobs.NewJob(source="github", task="fix it", requester_id=requester_id, repo=repo)
    with session_scope() as session:
        job_id = jobs.create_job(session, new).id
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, "worker-1", 60)
    return job_id


def ready(per_user: int = 2, per_repo: int = 2, **kwargs: Any) -> list[int]:
    with session_scope() as session:
        return slots.parked_ready(session, per_user, per_repo, grace=2, **kwargs)


@BOTH
def test_parked_jobs_are_sent_again_only_up_to_their_requesters_cap(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten jobs parked behind one requester whose cap is 2, and nothing running: the two oldest
    are sent; the other eight stay parked (sending them would only have them parked again)."""
    monkeypatch.setenv("RESOLVER_MAX_JOBS_PER_USER", "2")
    reset_caches()
    ids = parked(10, requester_id=new_user())
    assert run_reconcile() == ids[:2]
    assert waiting_job_messages(get_settings().redis_url) == {message_of(i) for i in ids[:2]}
    assert {message_of(i) for i in ids[2:]} == {slots.PARKED}


@BOTH
def test_a_running_job_takes_its_place_in_its_requesters_cap(resolver_env: ResolverEnv) -> None:
    user = new_user()
    running(requester_id=user)
    ids = parked(10, requester_id=user)
    assert ready(per_user=2) == ids[:1]
    running(requester_id=user)
    assert ready(per_user=2) == []


@BOTH
def test_a_job_sent_but_not_yet_taken_takes_its_place_in_its_caps(
    resolver_env: ResolverEnv,
) -> None:
    """A job an earlier pass sent (or the intake queued) is on its way to a slot: a pass sends
    no parked job into that slot, where the worker would only park it again."""
    user = new_user()
    ids = parked(10, requester_id=user, repo="o/r")
    assert ready(per_user=2, per_repo=5) == ids[:2]
    with session_scope() as session:
        jobs.mark_published(session, ids[0], "m-1")  # sent by that pass, not yet taken
    assert ready(per_user=2, per_repo=5) == ids[1:2]
    with session_scope() as session:
        jobs.mark_published(session, ids[1], "m-2")
    assert ready(per_user=2, per_repo=5) == []
    assert ready(per_user=5, per_repo=2) == []  # the repository's cap counts them the same way
    with session_scope() as session:
        queued = jobs.create_job(session, jobs.NewJob(source="github", task="new", repo="o/r"))
        jobs.mark_published(session, queued.id, "m-3")  # from the intake, by someone else
    assert ready(per_user=5, per_repo=3) == []
    assert ready(per_user=5, per_repo=4) == ids[2:3]


@BOTH
def test_a_conversation_sends_only_its_oldest_parked_job(resolver_env: ResolverEnv) -> None:
    """Follow-ups run one after another: a later job waits while an earlier one of its
    conversation is queued (parked or not) or running."""
    first, second = parked(2, conversation="github:o/r#1")
    assert ready(per_user=5) == [first]
    with session_scope() as session:
        jobs.mark_published(session, first, "m-1")  # sent, not yet taken
    assert ready(per_user=5) == []
    with session_scope() as session:
        assert jobs.take_lease(session, first, "worker-1", 60)
    assert ready(per_user=5) == []
    with session_scope() as session:
        ended = jobs.get_job(session, first)
        jobs.finish_job(session, ended, JobState.SUCCEEDED, Outcome.CHANGED_CODE)
    assert ready(per_user=5) == [second]


@BOTH
def test_parked_jobs_are_sent_again_only_up_to_their_repositorys_cap(
    resolver_env: ResolverEnv,
) -> None:
    running(repo="o/r")
    users = [new_user(f"user{n}") for n in range(4)]
    ids = [parked(requester_id=user, repo="o/r")[0] for user in users]
    other = parked(repo="o/other")
    assert ready(per_user=2, per_repo=2) == [ids[0], *other]


@BOTH
def test_a_pass_reads_only_parked_jobs_it_sends(resolver_env: ResolverEnv) -> None:
    """Only so many parked jobs are read per pass, oldest first, and none that waits (for a
    full cap, its conversation, or its requester's older jobs taking the free slots): a later
    job that could run is never left out behind them."""
    full, eager = new_user("full"), new_user("eager")
    running(requester_id=full)
    running(requester_id=full)
    parked(5, requester_id=full)
    follow_ups = parked(2, conversation="github:o/r#1")
    eagers = parked(5, requester_id=eager)
    free = parked(4)
    expected = [follow_ups[0], *eagers[:2], *free[:2]]
    assert ready(per_user=2, limit=5) == expected


@BOTH
def test_a_job_parked_within_its_grace_is_left_alone(resolver_env: ResolverEnv) -> None:
    with session_scope() as session:
        job = jobs.create_job(session, jobs.NewJob(source="github", task="fix it"))
        slots.park(session, job)
    assert ready() == []


@BOTH
@pytest.mark.parametrize("backlog", [10, 200])
def test_a_pass_over_parked_jobs_is_a_fixed_number_of_statements(
    resolver_env: ResolverEnv, backlog: int
) -> None:
    """It was three statements per parked job (each loaded whole, then its conversation and
    its two caps counted one by one)."""
    user = new_user()
    ids = parked(backlog, requester_id=user, repo="o/r")
    follow_ups = parked(backlog, conversation="github:o/r#1")
    with counted() as statements:
        released = ready(per_user=2, per_repo=5)
    assert len(statements) == 1, statements[:4]
    assert released == [*ids[:2], follow_ups[0]]
