"""Job records: creation, state changes, leases, trajectory and their JSON shape."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import JsonValue
from sqlalchemy import (
    Connection,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from resolver.contract.results import merged_result
from resolver.core.redact import Redactor
from resolver.core.states import JobState, Outcome, check_transition, is_terminal
from resolver.store import holds
from resolver.store.models import Job, JobEvent, utcnow


class JobNotFoundError(Exception):
    """No job has that id."""


@dataclass(frozen=True)
class NewJob:
    """What a trigger asks for. Built by integrations, the CLI and schedules."""

    source: str
    task: str
    repo: str | None = None
    requester: str | None = None
    requester_id: int | None = None
    trigger: dict[str, Any] | None = None
    conversation_key: str | None = None


def job_values(new: NewJob) -> dict[str, Any]:
    """The columns a new queued job sets; the model's defaults fill the rest."""
    return {
        "source": new.source,
        "task": new.task,
        "repo": new.repo,
        "requester": new.requester,
        "requester_id": new.requester_id,
        "trigger": dict(new.trigger or {}),
        "conversation_key": new.conversation_key[:300] if new.conversation_key else None,
        "state": JobState.QUEUED.value,
        # Known before the insert, so publishing needs no second write.
        "message_id": new_message_id(),
    }


# Unordered: each row's message id (unique, chosen before the insert) says which row it is.
# Asking for the parameters' order made SQLite send one INSERT per row.
_INSERT_JOBS = insert(Job).returning(Job.id, Job.message_id)
_DELETE_JOBS = delete(Job).where(Job.id.in_(bindparam("ids", expanding=True)))


def insert_jobs(conn: Connection, news: Sequence[NewJob]) -> list[tuple[int, str]]:
    """Insert queued jobs in one batched statement: each one's (id, message id), in order. The
    caller commits before publishing their messages (the outbox)."""
    if not news:
        return []
    rows = [job_values(new) for new in news]
    ids = {str(message_id): job_id for job_id, message_id in conn.execute(_INSERT_JOBS, rows)}
    return [(ids[row["message_id"]], row["message_id"]) for row in rows]


def delete_unreferenced(conn: Connection, job_ids: Sequence[int]) -> None:
    """Take back jobs just inserted in the connection's transaction, before anything refers to
    them (a redelivery's, whose delivery a first copy claimed)."""
    if job_ids:
        conn.execute(_DELETE_JOBS, {"ids": list(job_ids)})


def create_job(session: Session, new: NewJob) -> Job:
    """Insert one queued job (`insert_jobs`) and load it."""
    [(job_id, _)] = insert_jobs(session.connection(), [new])
    return get_job(session, job_id)


def get_job(session: Session, job_id: int) -> Job:
    job = session.get(Job, job_id)
    if job is None:
        raise JobNotFoundError(f"no job {job_id}")
    return job


def locked_job(session: Session, job_id: int) -> Job:
    """The job read afresh under a lock on its row, kept until the transaction ends, for a
    change made from what it holds (a stop's): the next writer who locks it reads this one's.
    A copy read earlier in the session is brought up to date in place. SQLite takes its write
    lock (`holds.hold`); PostgreSQL's FOR NO KEY UPDATE lets rows that refer to the job (its
    steps, its callbacks) be added meanwhile."""
    holds.hold(session.connection(), ())
    job = session.get(Job, job_id, populate_existing=True, with_for_update={"key_share": True})
    if job is None:
        raise JobNotFoundError(f"no job {job_id}")
    return job


def transition(job: Job, target: JobState) -> None:
    """Move a loaded job to `target`; raises IllegalTransitionError for a missing edge."""
    check_transition(JobState(job.state), target)
    job.state = target
    now = utcnow()
    if target is JobState.RUNNING and job.started_at is None:
        job.started_at = now
    if is_terminal(target):
        job.finished_at = now
        job.lease_owner = None
        job.lease_expires_at = None
    if target is JobState.QUEUED:
        job.finished_at = None
        job.published_at = None


def take_lease(session: Session, job_id: int, owner: str, seconds: float) -> bool:
    """Atomically claim a queued job, or a running one whose lease ran out. Commits."""
    now = utcnow()
    claimable = or_(
        Job.state == JobState.QUEUED,
        (Job.state == JobState.RUNNING) & (Job.lease_expires_at < now),
    )
    result = session.execute(
        update(Job)
        .where(Job.id == job_id, claimable)
        .values(
            state=JobState.RUNNING,
            lease_owner=owner,
            lease_expires_at=now + timedelta(seconds=seconds),
            attempts=Job.attempts + 1,
            started_at=func.coalesce(Job.started_at, now),
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return bool(getattr(result, "rowcount", 0) == 1)


def count_steps(session: Session, job_id: int) -> int:
    """How many agent steps (tool calls) the job has taken so far."""
    query = select(func.count(JobEvent.id)).where(
        JobEvent.job_id == job_id, JobEvent.kind == "action"
    )
    return int(session.scalar(query) or 0)


def renew_lease(session: Session, job_id: int, owner: str, seconds: float) -> bool:
    """Extend our lease; False means another worker took the job over."""
    now = utcnow()
    result = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.lease_owner == owner, Job.state == JobState.RUNNING)
        .values(lease_expires_at=now + timedelta(seconds=seconds))
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return bool(getattr(result, "rowcount", 0) == 1)


def finish_job(
    session: Session,
    job: Job,
    state: JobState,
    outcome: Outcome,
    *,
    error: str | None = None,
    result: Mapping[str, JsonValue] | None = None,
) -> None:
    """Record a job's end. Only the lease holder calls this."""
    transition(job, state)
    job.outcome = outcome
    job.error = error
    if result is not None:
        note_result(job, result)


def note_result(job: Job, changes: Mapping[str, JsonValue]) -> None:
    """Record `changes` in the job's result: the one writer of the column (`JobResult`)."""
    job.result = merged_result(job.result, changes)


def append_event(
    session: Session, job_id: int, kind: str, payload: dict[str, Any], redactor: Redactor
) -> JobEvent:
    """Add one redacted entry to the job's trajectory."""
    last = session.scalar(select(func.max(JobEvent.seq)).where(JobEvent.job_id == job_id))
    safe = redactor.redact_value(payload)
    assert isinstance(safe, dict)
    event = JobEvent(job_id=job_id, seq=(last or 0) + 1, kind=kind, payload=safe)
    session.add(event)
    session.flush()
    return event


def request_cancel(session: Session, job: Job) -> bool:
    """Cancel a queued job now; ask a running one to stop at its next check; False when it has
    ended. Read again under its lock first (`job` then says what it is now): a worker may have
    taken it, or recorded its end, since the caller read it."""
    job = locked_job(session, job.id)
    if job.state == JobState.QUEUED:
        finish_job(session, job, JobState.CANCELLED, Outcome.CANCELLED)
    elif job.state == JobState.RUNNING:
        job.cancel_requested = True
    else:
        return False
    return True


def retry_job(session: Session, job: Job) -> None:
    """Queue a failed or cancelled job again."""
    transition(job, JobState.QUEUED)
    job.outcome = None
    job.error = None
    job.cancel_requested = False


def sandbox_is_stale(job_id: str, owner: str | None) -> bool:
    """Whether a sandbox of this deployment should go: its job has ended, or the attempt that
    started it (`owner`) no longer holds the job's lease (its worker died and another attempt
    took over, or will). A job id this database does not know is left to the maximum age."""
    from resolver.store.db import session_scope

    try:
        key = int(job_id)
    except ValueError:
        return False  # not one of our job ids (a CLI or test sandbox)
    with session_scope() as session:
        job = session.get(Job, key)
        if job is None:
            return False
        if is_terminal(JobState(job.state)):
            return True
        if owner is None:
            return False
        expired = job.lease_expires_at is not None and job.lease_expires_at < utcnow()
        return job.lease_owner != owner or expired


def new_message_id() -> str:
    return f"job-{uuid.uuid4().hex}"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def job_to_dict(job: Job, events: Iterable[JobEvent] | None = None) -> dict[str, Any]:
    """The public JSON shape of a job (CLI `--json` and `/api/jobs`), with `events` as its
    trajectory when given."""
    data: dict[str, Any] = {
        "id": job.id,
        "state": job.state,
        "source": job.source,
        "repo": job.repo,
        "requester": job.requester,
        "task": job.task,
        "outcome": job.outcome,
        "error": job.error,
        "pr_url": job.pr_url,
        "branch": job.branch,
        "cost_usd": job.cost_usd,
        "model": job.model,
        "prompt_tokens": job.prompt_tokens,
        "completion_tokens": job.completion_tokens,
        "attempts": job.attempts,
        "result": job.result,
        "created_at": _iso(job.created_at),
        "started_at": _iso(job.started_at),
        "finished_at": _iso(job.finished_at),
    }
    if events is not None:
        data["trajectory"] = [
            {"seq": e.seq, "kind": e.kind, "at": _iso(e.created_at), **e.payload} for e in events
        ]
    return data


def mark_published(session: Session, job_id: int, message_id: str) -> None:
    """Note the id of the job's newest message, and when it was sent."""
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(message_id=message_id, published_at=utcnow())
        .execution_options(synchronize_session=False)
    )


def recent_jobs(session: Session, limit: int, before: int | None = None) -> list[Job]:
    """The newest `limit` jobs (older than job `before`, if given), newest first."""
    query = select(Job).order_by(Job.id.desc()).limit(limit)
    if before is not None:
        query = query.where(Job.id < before)
    return list(session.scalars(query))


def exhausted_jobs(session: Session, max_attempts: int) -> list[Job]:
    """Running jobs whose lease ran out after their last allowed attempt."""
    return list(
        session.scalars(
            select(Job).where(
                Job.state == JobState.RUNNING,
                Job.lease_expires_at < utcnow(),
                Job.attempts >= max_attempts,
            )
        )
    )


def queued_before(session: Session, cutoff: datetime) -> list[Job]:
    """Jobs still queued that were created before `cutoff`."""
    return list(
        session.scalars(select(Job).where(Job.state == JobState.QUEUED, Job.created_at < cutoff))
    )


def received_at(session: Session, job_id: int | None) -> datetime | None:
    """When the job was recorded (its webhook's arrival), if there is such a job."""
    return (
        None if job_id is None else session.scalar(select(Job.created_at).where(Job.id == job_id))
    )


def oldest_waiting(session: Session) -> dict[str, datetime | None]:
    """When the oldest work waiting on each queue was recorded: a queued job (jobs), a
    pending callback (callbacks)."""
    from resolver.store.models import Callback

    job = session.scalar(select(func.min(Job.created_at)).where(Job.state == JobState.QUEUED))
    callback = session.scalar(
        select(func.min(Callback.created_at)).where(Callback.state == "pending")
    )
    return {"jobs": job, "callbacks": callback}
