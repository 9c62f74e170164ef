"""The shared budgets' spend, summed from the jobs table, and the reservation a starting job
takes under a lock (a PostgreSQL advisory lock; SQLite's one writer), so that two jobs starting
at once cannot both fit into room for one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import ColumnElement, and_, case, func, select, text, update
from sqlalchemy.orm import Session

from resolver.core.budgets import (
    SCOPES,
    Cap,
    Refusal,
    Scope,
    Spent,
    crossed,
    refuse_start,
    window,
)
from resolver.core.states import JobState
from resolver.store.models import Job

ADVISORY_KEY: Final = 0x7265736F6C766572  # "resolver": one key, every budget check
TOP: Final = 20
"""Repositories and requesters listed per cap in the overview."""


def _usd(reserved: bool) -> ColumnElement[Any]:
    spent = func.coalesce(Job.cost_usd, 0.0)
    if not reserved:
        return spent
    held = and_(Job.state == JobState.RUNNING, Job.reserved_usd > spent)
    return case((held, Job.reserved_usd), else_=spent)


def _tokens(reserved: bool) -> ColumnElement[Any]:
    spent = Job.prompt_tokens + Job.completion_tokens
    if not reserved:
        return spent
    held = and_(Job.state == JobState.RUNNING, Job.reserved_tokens > spent)
    return case((held, Job.reserved_tokens), else_=spent)


def _owner(scope: Scope, job: Job) -> ColumnElement[bool] | None:
    """The jobs that share `job`'s cap of this scope; None when the job has no such owner."""
    if scope == "service":
        return Job.id.is_not(None)
    if scope == "repository":
        return Job.repo == job.repo if job.repo else None
    if job.requester_id is not None:
        return Job.requester_id == job.requester_id
    if job.requester:
        return and_(Job.requester_id.is_(None), Job.requester == job.requester)
    return None


def spent_by_scope(
    session: Session, job: Job, now: datetime, *, reserved: bool, others_only: bool
) -> dict[Scope, Spent]:
    """What each scope of `job` spent in its period; with `reserved`, running jobs count at
    least their reservation. `others_only` leaves the job itself out."""
    found: dict[Scope, Spent] = {}
    for scope in SCOPES:
        owner = _owner(scope, job)
        if owner is None:
            continue
        start, end = window(scope, now)
        query = select(
            func.coalesce(func.sum(_usd(reserved)), 0.0),
            func.coalesce(func.sum(_tokens(reserved)), 0),
        ).where(owner, Job.started_at >= start, Job.started_at < end)
        if others_only:
            query = query.where(Job.id != job.id)
        usd, tokens = session.execute(query).one()
        found[scope] = Spent(float(usd), int(tokens))
    return found


def _lock(session: Session, job_id: int) -> None:
    """Serialise budget checks until the transaction ends."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_KEY})
    # On SQLite the first write takes the database's only write lock; on PostgreSQL it drops
    # what an earlier attempt of this job held, before the sums are read.
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(reserved_usd=None, reserved_tokens=None)
        .execution_options(synchronize_session=False)
    )


def reserve(
    session: Session, job_id: int, caps: tuple[Cap, ...], estimate: Spent, now: datetime
) -> Refusal | None:
    """Reserve `estimate` for the job if every cap has room for it, else the refusal. The
    caller's transaction holds the lock: commit it promptly."""
    _lock(session, job_id)
    job = session.get(Job, job_id, populate_existing=True)
    if job is None:
        raise LookupError(f"job {job_id} not found")
    spent = spent_by_scope(session, job, now, reserved=True, others_only=True)
    refusal = refuse_start(caps, spent, estimate, now)
    if refusal is None:
        job.reserved_usd, job.reserved_tokens = estimate.usd, estimate.tokens
    return refusal


def crossed_while_running(
    session: Session, job_id: int, caps: tuple[Cap, ...], now: datetime
) -> Refusal | None:
    """The cap that what was really spent (this job's spend included) has reached, or None."""
    job = session.get(Job, job_id)
    if job is None or not caps:
        return None
    return crossed(caps, spent_by_scope(session, job, now, reserved=False, others_only=False), now)


@dataclass(frozen=True)
class CapSpend:
    """One line of the overview: a cap, whose spend it is, and how much of it is used."""

    cap: Cap
    who: str
    spent: float
    resets_at: datetime


def overview(session: Session, caps: tuple[Cap, ...], now: datetime) -> list[CapSpend]:
    """Spend (and running jobs' reservations) against each cap in its current period: the
    service, and the repositories and requesters that spent most."""
    lines: list[CapSpend] = []
    for cap in caps:
        start, resets = window(cap.scope, now)
        amount = func.sum(_usd(True) if cap.unit == "usd" else _tokens(True))
        period = (Job.started_at >= start, Job.started_at < resets)
        if cap.scope == "service":
            total = session.scalar(select(amount).where(*period))
            lines.append(CapSpend(cap, "service", float(total or 0), resets))
            continue
        who = Job.repo if cap.scope == "repository" else func.coalesce(Job.requester, "?")
        query = (
            select(who, amount)
            .where(*period, who.is_not(None))
            .group_by(who)
            .order_by(amount.desc())
            .limit(TOP)
        )
        for name, value in session.execute(query).all():
            lines.append(CapSpend(cap, str(name), float(value or 0), resets))
    return lines
