"""A conversation's jobs (an issue, a pull request, a thread): the ones before a job, the one
still active, a person's run again of a job, and the latest of many conversations at once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, Select, String, func, select
from sqlalchemy.orm import Session

from resolver.contract.triggers import read_trigger
from resolver.core.states import JobState
from resolver.store import bound, holds
from resolver.store.models import Job


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


def hold_reruns(session: Session, job_id: int) -> None:
    """Hold the runs again of job `job_id` until the transaction ends (`holds.hold`): of two
    presses of its `Run again` at once, the second waits for the first's commit, and
    `active_rerun` then finds the first's job."""
    holds.hold(session.connection(), [f"rerun:{job_id}"])


def active_rerun(session: Session, job: Job, requester_id: int) -> Job | None:
    """The newest queued or running job that `requester_id` asked for by running `job` again."""
    query = (
        select(Job)
        .where(
            Job.conversation_key == job.conversation_key,
            Job.requester_id == requester_id,
            Job.id > job.id,
            Job.state.in_((JobState.QUEUED, JobState.RUNNING)),
        )
        .order_by(Job.id.desc())
    )
    found = session.scalars(query)
    return next((new for new in found if read_trigger(new.trigger).origin.rerun_of == job.id), None)


# Built once: building a statement costs more than running it (its compiled form is cached).
def _latest_jobs_statement(dialect: str) -> Select[Any]:
    """Each key with its conversation's latest job id: a max per key (one index probe each)."""
    key = bound.each("keys", String(), dialect).c.value
    latest = select(func.max(Job.id)).where(Job.conversation_key == key).scalar_subquery()
    return select(key, latest)


_LATEST_JOBS = {dialect: _latest_jobs_statement(dialect) for dialect in bound.DIALECTS}


def latest_jobs(conn: Connection, conversation_keys: Iterable[str]) -> dict[str, int]:
    """Per conversation that has jobs: its latest job's id, all in one statement. A max per key
    rather than grouped: a max over an index range is one probe, a grouped max reads the
    range."""
    keys = list(dict.fromkeys(conversation_keys))
    if not keys:
        return {}
    rows = conn.execute(_LATEST_JOBS[bound.dialect_of(conn)], {"keys": keys})
    return {key: int(job_id) for key, job_id in rows if job_id is not None}
