"""Forgetting a person: their running jobs are stopped first; then their identities, tokens,
web sessions and user row are deleted, and what they wrote (request texts, steering messages,
the trajectories of their jobs) becomes "removed". The job rows stay, with their states,
outcomes, costs, tokens and links, so the spend and the pull requests still add up.

On SQLite the deletes overwrite the freed bytes (secure_delete) and the write-ahead log is
truncated after; on PostgreSQL the touched tables are vacuumed, so no dead row keeps a copy."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, delete, func, or_, select, text, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from resolver.core.logs import log
from resolver.core.states import TERMINAL
from resolver.store import jobs as store_jobs
from resolver.store import web_sessions
from resolver.store.models import (
    Callback,
    Credential,
    Identity,
    Job,
    JobEvent,
    Notice,
    ScheduleRun,
    SteeringMessage,
    User,
)

logger = logging.getLogger(__name__)

REMOVED = "removed"
PERSONAL_KEYS = frozenset(
    {"sender", "author", "login", "user", "requester", "text", "body", "comment", "title"}
)
TOUCHED = (
    "users",
    "identities",
    "credentials",
    "web_sessions",
    "jobs",
    "job_events",
    "steering_messages",
    "notices",
    "callbacks",
    "schedule_runs",
)


class ForgetError(Exception):
    """The person cannot be forgotten yet (or does not exist); the message says why."""


@dataclass(frozen=True)
class Forgotten:
    name: str
    identities: int
    tokens: int
    sessions: int
    jobs: int


def _user(session: Session, name: str) -> User:
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise ForgetError(f"no user named {name!r}; `resolver users list` lists them")
    return user


def name_of(session: Session, user_id: int) -> str | None:
    user = session.get(User, user_id)
    return None if user is None else user.name


def _their_jobs(session: Session, user_id: int) -> list[Job]:
    return list(session.scalars(select(Job).where(Job.requester_id == user_id)))


def stop_jobs(session: Session, name: str) -> list[int]:
    """Cancel the person's queued jobs and ask their running ones to stop; the running ids."""
    user = _user(session, name)
    running = []
    for job in _their_jobs(session, user.id):
        if job.state in TERMINAL:
            continue
        store_jobs.request_cancel(session, job)
        if job.state not in TERMINAL:
            running.append(job.id)
    return running


def still_running(session: Session, job_ids: Iterable[int]) -> list[int]:
    ids = list(job_ids)
    if not ids:
        return []
    active = select(Job.id).where(Job.id.in_(ids), Job.state.not_in([s.value for s in TERMINAL]))
    return list(session.scalars(active))


def _scrub(value: Any, words: list[str]) -> Any:
    """`value` with every string that holds one of `words`, and every personal key, removed."""
    if isinstance(value, dict):
        return {k: REMOVED if k in PERSONAL_KEYS else _scrub(v, words) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, words) for v in value]
    if isinstance(value, str) and any(w and w.lower() in value.lower() for w in words):
        return REMOVED
    return value


def forget(session: Session, name: str) -> Forgotten:
    """Forget the user `name`, whose jobs have all ended (stop_jobs first)."""
    user = _user(session, name)
    their = _their_jobs(session, user.id)
    busy = [job.id for job in their if job.state not in TERMINAL]
    if busy:
        raise ForgetError(
            f"{name}'s job(s) {', '.join(map(str, busy))} have not stopped yet; try again when "
            "they have"
        )
    people = [(i.provider, i.external_id) for i in user.identities]
    words = [name, *(i.login for i in user.identities if i.login)]
    words += [job.task for job in their if job.task]
    job_ids = [job.id for job in their]
    sessions = web_sessions.end_people(session, people)
    tokens = session.execute(delete(Credential).where(Credential.user_id == user.id))
    identities = session.execute(delete(Identity).where(Identity.user_id == user.id))
    for job in their:
        job.task = REMOVED
        job.requester = REMOVED
        job.trigger = _scrub(dict(job.trigger or {}), words)
        job.result = _scrub(dict(job.result or {}), words)
        if job.error:
            job.error = _scrub(job.error, words)
    if job_ids:
        session.execute(delete(JobEvent).where(JobEvent.job_id.in_(job_ids)))
        session.add_all(
            JobEvent(job_id=i, seq=1, kind=REMOVED, payload={"text": REMOVED}) for i in job_ids
        )
        session.execute(
            update(SteeringMessage)
            .where(
                or_(SteeringMessage.job_id.in_(job_ids), SteeringMessage.from_job_id.in_(job_ids))
            )
            .values(text=REMOVED, author=None)
        )
        for notice in session.scalars(select(Notice).where(Notice.job_id.in_(job_ids))):
            notice.body = REMOVED
            notice.context = _scrub(dict(notice.context or {}), words)
        for callback in session.scalars(select(Callback).where(Callback.job_id.in_(job_ids))):
            callback.payload = _scrub(dict(callback.payload or {}), words)
            callback.result = _scrub(dict(callback.result or {}), words)
    session.execute(
        update(ScheduleRun)
        .where(func.lower(ScheduleRun.requested_by).in_([w.lower() for w in words[:2]]))
        .values(requested_by=REMOVED)
    )
    session.execute(delete(User).where(User.id == user.id))
    return Forgotten(
        name,
        int(getattr(identities, "rowcount", 0) or 0),
        int(getattr(tokens, "rowcount", 0) or 0),
        sessions,
        len(job_ids),
    )


def secure_delete(conn: Connection) -> None:
    """Before the deletes, on SQLite: overwrite freed bytes with zeros."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA secure_delete=ON")


def leave_no_copy(conn: Connection) -> None:
    """After the commit: no old page (SQLite's log) or dead row (PostgreSQL) keeps a copy."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        return
    autocommit = conn.execution_options(isolation_level="AUTOCOMMIT")
    for table in TOUCHED:
        autocommit.execute(text(f"VACUUM {table}"))


def forget_now(engine: Engine, name: str) -> Forgotten:
    """Forget `name` in a transaction of its own, leaving no copy behind once committed."""
    with engine.begin() as conn:
        secure_delete(conn)
        with Session(bind=conn) as session:
            gone = forget(session, name)
            session.flush()
    try:
        with engine.connect() as conn:
            leave_no_copy(conn)
    except SQLAlchemyError as error:  # e.g. a role that may not VACUUM: the rows are gone
        log(logger, logging.WARNING, "forget.copies_left", error=type(error).__name__)
    return gone
