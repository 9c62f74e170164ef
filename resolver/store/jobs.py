"""Job records: creation, state changes, leases, trajectory and their JSON shape."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import JsonValue
from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    Select,
    String,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased
from sqlalchemy.sql.selectable import Subquery

from resolver.contract.results import merged_result
from resolver.core.redact import Redactor
from resolver.core.states import JobState, Outcome, check_transition, is_terminal
from resolver.store import bound, holds
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


def hold_slots(session: Session, job: Job) -> None:
    """Hold the job's requester's and repository's slots and its conversation until the
    session's transaction ends (`holds.hold`). A worker holds them while it counts and then
    takes its job's lease or parks it, and while it ends a job and reads who waited for it:
    two workers cannot both count a free slot and take it, and a job parking as another of its
    owners ends is either seen by that one's `next_waiting` or sees it ended."""
    names = [] if job.conversation_key is None else [job.conversation_key]
    if job.requester_id is not None:
        names.append(f"slots:requester:{job.requester_id}")
    if job.repo is not None:
        names.append(f"slots:repo:{job.repo}")
    holds.hold(session.connection(), names)


def over_capacity(session: Session, job: Job, per_user: int, per_repo: int) -> bool:
    """Whether the requester or the repository already has its fill of running jobs."""
    running = (
        select(func.count()).select_from(Job).where(Job.state == JobState.RUNNING, Job.id != job.id)
    )
    if job.requester_id is not None:
        mine = session.scalar(running.where(Job.requester_id == job.requester_id)) or 0
        if mine >= per_user:
            return True
    if job.repo is not None:
        theirs = session.scalar(running.where(Job.repo == job.repo)) or 0
        if theirs >= per_repo:
            return True
    return False


PARKED = "parked"
"""A queued job's `message_id` while no message of it is on the queue: a worker took its
message and found it had to wait (for a slot, or for the job before it in its conversation).
It is published again when what held it ends (`next_waiting`), or by the reconciler
(`parked_ready`); never while a message of it still waits, so it is never published twice."""


def park(session: Session, job: Job) -> None:
    job.message_id = PARKED


def next_waiting(session: Session, job: Job) -> list[int]:
    """The oldest parked jobs that were waiting on `job`: one for its requester or repository
    (capacity), and one in its conversation (follow-ups run one after another)."""
    waiting: list[int] = []
    related = []
    if job.requester_id is not None:
        related.append(Job.requester_id == job.requester_id)
    if job.repo is not None:
        related.append(Job.repo == job.repo)
    queued = (
        select(Job.id)
        .where(Job.state == JobState.QUEUED, Job.message_id == PARKED)
        .order_by(Job.id)
        .limit(1)
    )
    if related:
        found = session.scalar(queued.where(or_(*related)))
        if found is not None:
            waiting.append(found)
    if job.conversation_key is not None:
        found = session.scalar(queued.where(Job.conversation_key == job.conversation_key))
        if found is not None and found not in waiting:
            waiting.append(found)
    return waiting


def conversation_busy(session: Session, job: Job) -> bool:
    """Whether an earlier job of the same conversation is still queued or running: a follow-up
    waits for it, so two jobs never work on one thread's branch at once."""
    if job.conversation_key is None:
        return False
    earlier = select(Job.id).where(
        Job.conversation_key == job.conversation_key,
        Job.id < job.id,
        Job.state.in_((JobState.QUEUED, JobState.RUNNING)),
    )
    return session.scalar(earlier.limit(1)) is not None


def previous_in_conversation(session: Session, job: Job) -> Job | None:
    """The latest earlier job of the same conversation, if any."""
    if job.conversation_key is None:
        return None
    return session.scalars(
        select(Job)
        .where(Job.conversation_key == job.conversation_key, Job.id < job.id)
        .order_by(Job.id.desc())
        .limit(1)
    ).first()


def earlier_in_conversation(session: Session, job_id: int, limit: int = 50) -> list[Job]:
    """The newest earlier jobs of the job's conversation, newest first (a review looks for its
    last review of the same pull request)."""
    job = session.get(Job, job_id)
    if job is None or job.conversation_key is None:
        return []
    return list(
        session.scalars(
            select(Job)
            .where(Job.conversation_key == job.conversation_key, Job.id < job.id)
            .order_by(Job.id.desc())
            .limit(limit)
        )
    )


def active_in_conversation(session: Session, conversation_key: str, exclude: int) -> Job | None:
    """The newest queued or running job of a conversation other than `exclude` (`@bot stop`)."""
    return session.scalars(
        select(Job)
        .where(
            Job.conversation_key == conversation_key,
            Job.id != exclude,
            Job.state.in_((JobState.QUEUED, JobState.RUNNING)),
        )
        .order_by(Job.id.desc())
        .limit(1)
    ).first()


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


def request_cancel(session: Session, job: Job) -> None:
    """Cancel a queued job now; ask a running one to stop at its next check."""
    if job.state == JobState.QUEUED:
        finish_job(session, job, JobState.CANCELLED, Outcome.CANCELLED)
    elif job.state == JobState.RUNNING:
        job.cancel_requested = True


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


def stranded_jobs(session: Session, waiting: set[str], grace: float) -> list[int]:
    """Queued jobs whose message is gone, and running jobs whose worker stopped renewing."""
    now = utcnow()
    cutoff = now - timedelta(seconds=grace)
    # Two columns, the parked left out by the database: a backlog of queued jobs is read each
    # beat, and loading each as a whole row took most of the pass.
    queued = session.execute(
        select(Job.id, Job.message_id).where(
            Job.state == JobState.QUEUED,
            or_(Job.message_id.is_(None), Job.message_id != PARKED),
            or_(
                Job.published_at < cutoff, (Job.published_at.is_(None)) & (Job.created_at < cutoff)
            ),
        )
    )
    lost = [job_id for job_id, message_id in queued if message_id not in waiting]
    expired = session.scalars(
        select(Job.id).where(Job.state == JobState.RUNNING, Job.lease_expires_at < now)
    )
    return lost + list(expired)


def mark_published(session: Session, job_id: int, message_id: str) -> None:
    """Note the id of the job's newest message, and when it was sent."""
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(message_id=message_id, published_at=utcnow())
        .execution_options(synchronize_session=False)
    )


def recent_jobs(session: Session, limit: int) -> list[Job]:
    """The newest `limit` jobs, newest first."""
    return list(session.scalars(select(Job).order_by(Job.id.desc()).limit(limit)))


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


# Built once: building a statement costs more than running it (its compiled form is cached).
def _latest_jobs_statement(dialect: str) -> Select[Any]:
    """Each key with its conversation's latest job id: a max per key (one index probe each)."""
    key = bound.each("keys", String(), dialect).c.value
    latest = select(func.max(Job.id)).where(Job.conversation_key == key).scalar_subquery()
    return select(key, latest)


_LATEST_JOBS = {dialect: _latest_jobs_statement(dialect) for dialect in bound.DIALECTS}
_ACTIVE = (JobState.QUEUED.value, JobState.RUNNING.value)


_ACTIVE_SQL: list[ColumnElement[str]] = [literal_column(f"'{state}'") for state in _ACTIVE]
"""The active states written into the statement (no bound list: see store.bound), so that each
count keeps its (owner, state) index on both databases."""


@functools.cache  # one per cap the deployment sets, built once
def _jobs_ahead_statement(dialect: str, counted: tuple[int, int]) -> Select[Any]:
    """Per job, its active jobs ahead by requester and by repository, each counted up to its
    bound (written into the statement: a bound limit gets PostgreSQL's generic plan, ten times
    slower here)."""
    job = aliased(Job)
    by_owner = []
    for column, most in zip(("requester_id", "repo"), counted, strict=True):
        earlier = aliased(Job)
        ahead = (
            select(earlier.id)
            .where(
                getattr(earlier, column) == getattr(job, column),
                earlier.state.in_(_ACTIVE_SQL),
                earlier.id < job.id,
            )
            .limit(literal_column(str(int(most))))
            .correlate(job)
            .subquery()
        )
        by_owner.append(select(func.count()).select_from(ahead).scalar_subquery())
    ids = select(bound.each("ids", Integer(), dialect).c.value)
    return select(job.id, *by_owner).where(job.id.in_(ids))


def latest_jobs(conn: Connection, conversation_keys: Iterable[str]) -> dict[str, int]:
    """Per conversation that has jobs: its latest job's id, all in one statement. A max per key
    rather than grouped: a max over an index range is one probe, a grouped max reads the
    range."""
    keys = list(dict.fromkeys(conversation_keys))
    if not keys:
        return {}
    rows = conn.execute(_LATEST_JOBS[bound.dialect_of(conn)], {"keys": keys})
    return {key: int(job_id) for key, job_id in rows if job_id is not None}


def jobs_ahead(
    conn: Connection, job_ids: Sequence[int], counted: tuple[int, int]
) -> dict[int, tuple[int, int]]:
    """Per job: the active jobs ahead of it with the same requester, and with the same
    repository, each counted up to its bound in `counted` (one count per owner, so each can
    use its own index)."""
    if not job_ids:
        return {}
    statement = _jobs_ahead_statement(bound.dialect_of(conn), counted)
    rows = conn.execute(statement, {"ids": list(job_ids)})
    return {job_id: (int(user), int(repo)) for job_id, user, repo in rows}


PARKED_READ = 200
"""The most parked jobs one reconciler pass reads (and sends), oldest first. The oldest are
enough: the statement leaves out every job that would only be parked again (its conversation
busy, a cap full, or its requester's or repository's older jobs taking the free slots), so a
job that can run is never kept out by ones that cannot; the rest come on the next beats."""


def parked_ready(
    session: Session, per_user: int, per_repo: int, grace: float, limit: int = PARKED_READ
) -> list[int]:
    """Parked jobs (for longer than `grace`) that nothing holds back any more, oldest first:
    what should have published them ended without doing so (a watchdog's ending, a lost race).

    One statement, however many are parked: it was three queries per parked job, each loaded
    whole. The conversation and the caps mean what they mean to a worker (`conversation_busy`,
    `over_capacity`), but now the jobs one pass releases fill their caps too: a requester with
    2 free slots gets its 2 oldest, not all its parked jobs (each sent, then parked again); and
    a job sent but not yet taken by a worker holds its slot against the next pass. The
    database still walks every parked job to leave out those held back: with 20,000 parked,
    6 ms on PostgreSQL when all are held, 20-35 ms when all could run."""
    cutoff = utcnow() - timedelta(seconds=grace)
    return list(session.scalars(_parked_ready_statement(cutoff, per_user, per_repo, limit)))


def _taking_slots_by(column: InstrumentedAttribute[Any]) -> tuple[Subquery, ColumnElement[int]]:
    """The jobs per owner in `column` (requester or repository) that hold a slot of its cap or
    are on their way to one, and that count for a job's owner once joined (0 when none): the
    running ones, and the queued ones whose message waits for a worker (sent by an earlier
    pass, or by the intake). Counting only the running ones, a pass sent parked jobs into slots
    that the jobs it had sent the beat before were about to take, and the worker parked them
    again."""
    taking = or_(
        Job.state == JobState.RUNNING,
        and_(
            Job.state == JobState.QUEUED,
            or_(Job.message_id.is_(None), Job.message_id != PARKED),
        ),
    )
    counts = (
        select(column.label("owner"), func.count().label("running"))
        .where(taking)
        .group_by(column)
        .subquery()
    )
    return counts, func.coalesce(counts.c.running, 0)


def _slot(column: InstrumentedAttribute[Any], running: ColumnElement[int]) -> ColumnElement[int]:
    """The slot of its owner's cap a job takes when the older ones take theirs first (a job
    with no owner in `column` is under no cap: 0)."""
    nth = func.row_number().over(partition_by=column, order_by=Job.id)
    return case((column.is_(None), 0), else_=running + nth)


def _parked_ready_statement(
    cutoff: datetime, per_user: int, per_repo: int, limit: int
) -> Select[tuple[int]]:
    """The ids of the oldest parked jobs past `cutoff` that could run now, and that still fit
    their requester's and repository's caps once the older such jobs took their slots. A job
    whose conversation has an earlier job queued (parked or not) or running waits for it."""
    users, user_running = _taking_slots_by(Job.requester_id)
    repos, repo_running = _taking_slots_by(Job.repo)
    earlier = aliased(Job)
    busy = select(earlier.id).where(
        earlier.conversation_key == Job.conversation_key,
        earlier.id < Job.id,
        earlier.state.in_((JobState.QUEUED, JobState.RUNNING)),
    )
    could_run = (
        select(
            Job.id,
            _slot(Job.requester_id, user_running).label("user_slot"),
            _slot(Job.repo, repo_running).label("repo_slot"),
        )
        .outerjoin(users, users.c.owner == Job.requester_id)
        .outerjoin(repos, repos.c.owner == Job.repo)
        .where(
            Job.state == JobState.QUEUED,
            Job.message_id == PARKED,
            Job.updated_at < cutoff,
            ~busy.exists(),
            # A job its other cap holds back takes no slot from the jobs behind it.
            user_running < per_user,
            repo_running < per_repo,
        )
        .subquery()
    )
    return (
        select(could_run.c.id)
        .where(could_run.c.user_slot <= per_user, could_run.c.repo_slot <= per_repo)
        .order_by(could_run.c.id)
        .limit(limit)
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
