"""Retention: the trajectories (commands, outputs, diffs) of finished jobs older than the
configured days are pruned, a batch of jobs per transaction so intake never waits long on
them. The job row stays whole: its outcome, result, cost, tokens and links. A pruned job keeps
one trajectory entry of kind `pruned` that says so."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from resolver.core.states import TERMINAL
from resolver.store.models import Job, JobEvent

PRUNED = "pruned"


@dataclass(frozen=True)
class Pruned:
    jobs: int
    events: int


def cutoff(now: datetime, days: int) -> datetime:
    return now - timedelta(days=days)


def prune_batch(session: Session, before: datetime, batch: int) -> Pruned:
    """Prune the trajectories of up to `batch` finished jobs last changed before `before`."""
    job_ids = list(
        session.scalars(
            select(JobEvent.job_id)
            .join(Job, Job.id == JobEvent.job_id)
            .where(
                Job.state.in_([s.value for s in TERMINAL]),
                Job.updated_at < before,
                JobEvent.kind != PRUNED,
            )
            .group_by(JobEvent.job_id)
            .limit(batch)
        )
    )
    if not job_ids:
        return Pruned(0, 0)
    gone = session.execute(
        delete(JobEvent).where(JobEvent.job_id.in_(job_ids), JobEvent.kind != PRUNED)
    )
    marked = set(
        session.scalars(
            select(JobEvent.job_id).where(JobEvent.job_id.in_(job_ids), JobEvent.kind == PRUNED)
        )
    )
    rows = [
        {"job_id": job_id, "seq": 0, "kind": PRUNED, "payload": {"text": "trajectory pruned"}}
        for job_id in job_ids
        if job_id not in marked
    ]
    if rows:
        session.execute(insert(JobEvent), rows)
    return Pruned(len(job_ids), int(getattr(gone, "rowcount", 0) or 0))


def pending(session: Session, before: datetime) -> int:
    """How many finished jobs before `before` still have a trajectory to prune."""
    return int(
        session.scalar(
            select(func.count(func.distinct(JobEvent.job_id)))
            .join(Job, Job.id == JobEvent.job_id)
            .where(
                Job.state.in_([s.value for s in TERMINAL]),
                Job.updated_at < before,
                JobEvent.kind != PRUNED,
            )
        )
        or 0
    )
