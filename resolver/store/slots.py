"""Whose turn it is: a job's slots under the caps (per requester, per repository), its place
after the earlier jobs of its conversation, parking a job that must wait and publishing it
again when what held it ends, the reconciler's reads of jobs left waiting, and a new job's
place in the queue. The job records themselves are in `store.jobs`."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    Select,
    and_,
    case,
    func,
    literal_column,
    or_,
    select,
)
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased
from sqlalchemy.sql.selectable import Subquery

from resolver.core.states import JobState
from resolver.store import bound, holds
from resolver.store.models import Job, utcnow


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


def stranded_jobs(session: Session, waiting: set[str], grace: float) -> list[int]:
    """Queued jobs whose message is gone, and running jobs whose worker stopped renewing (but
    for those whose message, sent again, waits in `waiting`)."""
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
    # A running job sent again waits for a free worker like a queued one: once its new message
    # waits, it is not sent again (each pass added a copy while every worker was busy).
    expired = session.execute(
        select(Job.id, Job.message_id).where(
            Job.state == JobState.RUNNING, Job.lease_expires_at < now
        )
    )
    return lost + [job_id for job_id, message_id in expired if message_id not in waiting]


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
