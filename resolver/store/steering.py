"""Steering messages: a later request of a conversation, sent to its running job's inbox.

The request's own job stays queued and parked while its message waits. When the running job's
agent takes the message, that job ends as delivered; when the running job ends first, the
parked job is published like any follow-up (`slots.next_waiting`), so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from resolver.core.states import JobState, Outcome
from resolver.store import jobs, slots
from resolver.store.models import Job, SteeringMessage, utcnow


@dataclass(frozen=True)
class Steer:
    """A message the agent takes into its conversation."""

    id: int
    author: str | None
    text: str


def running_target(session: Session, job: Job) -> Job | None:
    """The running job of `job`'s conversation, started before it: what `job` would steer."""
    if job.conversation_key is None:
        return None
    return session.scalars(
        select(Job)
        .where(
            Job.conversation_key == job.conversation_key,
            Job.id < job.id,
            Job.state == JobState.RUNNING,
        )
        .order_by(Job.id.desc())
        .limit(1)
    ).first()


def is_waiting(session: Session, target_id: int, from_job_id: int) -> bool:
    """Whether `from_job_id`'s message already waits in `target_id`'s inbox."""
    found = select(SteeringMessage.id).where(
        SteeringMessage.job_id == target_id, SteeringMessage.from_job_id == from_job_id
    )
    return session.scalar(found) is not None


def add_message(session: Session, target: Job, source: Job) -> None:
    """Put `source`'s request in `target`'s inbox and park `source` until it is taken."""
    session.add(
        SteeringMessage(
            job_id=target.id, from_job_id=source.id, author=source.requester, text=source.task
        )
    )
    slots.park(session, source)
    jobs.note_result(source, {"steering": target.id})


def take_messages(
    session: Session, job_id: int, step: int, seen: frozenset[int]
) -> tuple[list[Steer], list[Job]]:
    """The messages of `job_id`'s inbox that this attempt has not `seen`, oldest first: the
    untaken ones are marked taken at `step`, and their own jobs end as delivered (returned, for
    their status). Messages taken by an earlier attempt (its worker died) come again, since the
    conversation they joined is gone. A message whose job was stopped meanwhile is dropped."""
    rows = session.scalars(
        select(SteeringMessage)
        .where(
            SteeringMessage.job_id == job_id,
            SteeringMessage.id.not_in(seen),
            # A dropped message is taken at no step.
            or_(SteeringMessage.taken_at.is_(None), SteeringMessage.taken_at_step.is_not(None)),
        )
        .order_by(SteeringMessage.id)
    ).all()
    messages: list[Steer] = []
    delivered: list[Job] = []
    for row in rows:
        if row.taken_at is None:
            source = _deliver(session, row, step)
            if source is None:
                continue
            delivered.append(source)
        messages.append(Steer(row.id, row.author, row.text))
    return messages, delivered


def _deliver(session: Session, row: SteeringMessage, step: int) -> Job | None:
    """Mark `row` taken and end its job as delivered; None when that job ended meanwhile. Read
    under its lock: a stop of that request is either seen here, or sees it delivered."""
    source = jobs.locked_job(session, row.from_job_id)  # its row goes with the job (CASCADE)
    dropped = source.state != JobState.QUEUED
    row.taken_at, row.taken_at_step = utcnow(), None if dropped else step
    if dropped:
        return None
    summary = f"Job {row.job_id} read this message at its step {step}."
    result: dict[str, JsonValue] = {"summary": summary, "steered": row.job_id}
    jobs.finish_job(session, source, JobState.SUCCEEDED, Outcome.ANSWERED, result=result)
    return source


def waiting_sources(session: Session, job_id: int) -> list[Job]:
    """The parked jobs whose messages still wait in `job_id`'s inbox."""
    return list(
        session.scalars(
            select(Job)
            .join(SteeringMessage, SteeringMessage.from_job_id == Job.id)
            .where(
                SteeringMessage.job_id == job_id,
                SteeringMessage.taken_at.is_(None),
                Job.state == JobState.QUEUED,
            )
            .order_by(Job.id)
        )
    )
