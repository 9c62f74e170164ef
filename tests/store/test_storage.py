"""Storage behaviour, on SQLite and PostgreSQL alike."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from resolver.core.redact import Redactor
from resolver.core.states import IllegalTransitionError, JobState, Outcome
from resolver.store import jobs
from resolver.store.accounts import AccountError, add_user, find_identity, link_identity
from resolver.store.db import session_scope
from resolver.store.models import Delivery, JobEvent, utcnow

PUBLIC_FIELDS = {
    "id",
    "state",
    "source",
    "repo",
    "requester",
    "outcome",
    "pr_url",
    "cost_usd",
    "created_at",
    "finished_at",
}


def new_job(**overrides) -> int:
    with session_scope() as session:
        spec = {"source": "github", "task": "fix it", "repo": "o/r", "requester": "ada"}
        job = jobs.create_job(session, jobs.NewJob(**{**spec, **overrides}))
        return job.id


def test_a_delivery_key_is_stored_once(resolver_env, backend) -> None:
    with session_scope() as session:
        session.add(Delivery(provider="github", delivery_key="hook:1"))
    with pytest.raises(IntegrityError), session_scope() as session:
        session.add(Delivery(provider="github", delivery_key="hook:1"))
    with session_scope() as session:
        session.add(Delivery(provider="gitlab", delivery_key="hook:1"))


def test_identities_map_senders_to_users(resolver_env, backend) -> None:
    with session_scope() as session:
        add_user(session, "ada")
        link_identity(session, "ada", "github", "42", "Ada-L")
        link_identity(session, "ada", "slack", "T1:U2")
    with session_scope() as session:
        assert find_identity(session, "github", external_id="42").user.name == "ada"
        assert find_identity(session, "github", login="ada-l").user.name == "ada"
        assert find_identity(session, "slack", external_id="T1:U2") is not None
        assert find_identity(session, "github", login="someone") is None
        add_user(session, "bob")
        with pytest.raises(AccountError, match="linked to another user"):
            link_identity(session, "bob", "github", "42")


def test_only_one_worker_gets_the_lease(resolver_env, backend) -> None:
    job_id = new_job()

    def grab(owner: str) -> bool:
        with session_scope() as session:
            return jobs.take_lease(session, job_id, owner, 30)

    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(grab, [f"w{i}" for i in range(8)]))
    assert won.count(True) == 1
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        assert job.state == JobState.RUNNING and job.attempts == 1


def test_an_expired_lease_can_be_taken_over(resolver_env, backend) -> None:
    job_id = new_job()
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, "first", 30)
        assert not jobs.take_lease(session, job_id, "second", 30)
        jobs.get_job(session, job_id).lease_expires_at = utcnow() - timedelta(seconds=1)
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, "second", 30)
        assert not jobs.renew_lease(session, job_id, "first", 30)
        assert jobs.get_job(session, job_id).attempts == 2


def test_illegal_transition_raises_and_changes_nothing(resolver_env, backend) -> None:
    job_id = new_job()
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        jobs.transition(job, JobState.RUNNING)
        jobs.finish_job(session, job, JobState.SUCCEEDED, Outcome.ANSWERED)
    with pytest.raises(IllegalTransitionError), session_scope() as session:
        jobs.transition(jobs.get_job(session, job_id), JobState.RUNNING)
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        assert job.state == JobState.SUCCEEDED and job.finished_at is not None


def test_trajectory_is_redacted_and_ordered(resolver_env, backend) -> None:
    job_id = new_job()
    redactor = Redactor(["tok-abcdef-123"])
    with session_scope() as session:
        jobs.append_event(session, job_id, "action", {"command": "echo tok-abcdef-123"}, redactor)
        jobs.append_event(session, job_id, "observation", {"output": ["tok-abcdef-123"]}, redactor)
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        data = jobs.job_to_dict(job, job.events)
    assert [e["seq"] for e in data["trajectory"]] == [1, 2]
    assert data["trajectory"][0]["command"] == "echo ******"
    assert data["trajectory"][1]["output"] == ["******"]
    assert set(data) >= PUBLIC_FIELDS


def test_cancel_and_retry(resolver_env, backend) -> None:
    job_id = new_job()
    with session_scope() as session:
        jobs.request_cancel(session, jobs.get_job(session, job_id))
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        assert job.state == JobState.CANCELLED
        jobs.retry_job(session, job)
        assert job.state == JobState.QUEUED and job.finished_at is None
    assert not jobs.sandbox_is_stale(str(job_id), None)
    # A job id this database does not know may be another deployment's: never "finished".
    assert not jobs.sandbox_is_stale("999999", None)
    assert not jobs.sandbox_is_stale("cli-sandbox", None)


def test_a_sandbox_is_stale_once_its_attempt_lost_the_lease(resolver_env, backend) -> None:
    job_id = new_job()
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, "first", 60)
    assert not jobs.sandbox_is_stale(str(job_id), "first")
    assert jobs.sandbox_is_stale(str(job_id), "someone-else")
    with session_scope() as session:
        jobs.get_job(session, job_id).lease_expires_at = utcnow() - timedelta(seconds=1)
    assert jobs.sandbox_is_stale(str(job_id), "first")
    with session_scope() as session:
        assert jobs.take_lease(session, job_id, "second", 60)
    assert jobs.sandbox_is_stale(str(job_id), "first")
    assert not jobs.sandbox_is_stale(str(job_id), "second")


def test_deleting_a_job_removes_its_events(resolver_env, backend) -> None:
    job_id = new_job()
    with session_scope() as session:
        jobs.append_event(session, job_id, "note", {"x": 1}, Redactor())
    with session_scope() as session:
        session.delete(jobs.get_job(session, job_id))
    with session_scope() as session:
        assert session.query(JobEvent).count() == 0
