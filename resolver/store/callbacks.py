"""Callback rows: a callback recorded in the caller's transaction, one attempt row per try,
and how it ended."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, func, insert, or_, select, update
from sqlalchemy.orm import Session

from resolver.contract.callbacks import (
    CallbackPayload,
    CallbackResult,
    dump_callback_result,
    dump_payload,
    read_callback_result,
)
from resolver.contract.errors import CallbackError
from resolver.contract.triggers import JsonObject
from resolver.core.logs import redact
from resolver.store import bound
from resolver.store.models import Callback, CallbackAttempt, Job, utcnow


@dataclass(frozen=True)
class NewCallback:
    """A callback to record: the provider it goes through, what it sends, and its job."""

    provider: str
    payload: CallbackPayload
    job_id: int | None = None

    def row(self) -> JsonObject:
        """Its row's values; the payload's kind is the row's action."""
        return {
            "provider": self.provider,
            "action": self.payload.kind,
            "payload": dump_payload(self.payload),
            "job_id": self.job_id,
        }


def record_callback(
    session: Session, provider: str, payload: CallbackPayload, job_id: int | None = None
) -> Callback:
    """Insert a pending callback (its action is its payload's kind). Commit, then
    `broker.publish.publish_callback(id)` (the outbox order)."""
    callback = Callback(**NewCallback(provider, payload, job_id).row())
    session.add(callback)
    session.flush()
    return callback


def pending_of(session: Session, job_id: int, actions: Sequence[str]) -> list[tuple[int, str]]:
    """The job's pending callbacks of `actions`, oldest first: (id, action)."""
    rows = session.execute(
        select(Callback.id, Callback.action)
        .where(
            Callback.job_id == job_id,
            Callback.action.in_(actions),
            Callback.state == "pending",
        )
        .order_by(Callback.id)
    )
    return [(callback_id, action) for callback_id, action in rows]


def stalled_callbacks(session: Session, grace_seconds: float) -> list[int]:
    """Pending callbacks well past their due time that no try holds: their message was lost (a
    worker killed while holding it, Redis emptied). Sending one twice is safe: a sent callback
    is skipped, and a copy that finds it claimed leaves it to its owner."""
    now = utcnow()
    overdue = func.coalesce(Callback.due_at, Callback.created_at) < now - timedelta(
        seconds=grace_seconds
    )
    free = or_(Callback.claimed_until.is_(None), Callback.claimed_until < now)
    query = select(Callback.id).where(Callback.state == "pending", overdue, free)
    return list(session.scalars(query))


def claim(session: Session, callback_id: int, seconds: float) -> bool:
    """Make this try the owner of a pending callback for `seconds`, unless another try owns it
    now: one statement, so that of two copies of its message running at once (a copy the
    reconciler sent while the first still waited in a backed-up queue) only one posts. The
    caller commits it before sending; `release` (or the callback's end) gives it up."""
    now = utcnow()
    claimed = session.execute(
        update(Callback)
        .where(
            Callback.id == callback_id,
            Callback.state == "pending",
            or_(Callback.claimed_until.is_(None), Callback.claimed_until < now),
        )
        .values(claimed_until=now + timedelta(seconds=seconds))
        .execution_options(synchronize_session=False)
    )
    return bool(getattr(claimed, "rowcount", 0) == 1)


def mark_posting(session: Session, callback_id: int) -> datetime | None:
    """Record that this callback is about to post a message (the caller commits it before the
    post). Returns when an earlier try did the same (its post may have been made and its
    answer lost), else None."""
    callback = session.get(Callback, callback_id)
    if callback is None:
        return None
    stored = read_callback_result(callback.result)
    if stored.posting is not None:
        return stored.posting
    callback.result = dump_callback_result(stored.model_copy(update={"posting": utcnow()}))
    return None


def record_attempt(
    session: Session, callback_id: int, outcome: str, error: CallbackError | None
) -> int:
    """Record one try; returns how many tries there have been."""
    number = (
        session.scalar(
            select(func.max(CallbackAttempt.number)).where(
                CallbackAttempt.callback_id == callback_id
            )
        )
        or 0
    ) + 1
    session.add(
        CallbackAttempt(
            callback_id=callback_id,
            number=number,
            outcome=outcome,
            status=error.status if error else None,
            detail=redact(str(error)) if error else None,
            retry_after=getattr(error, "retry_after", None),
        )
    )
    return number


def set_due(session: Session, callback_id: int, seconds: float) -> None:
    """The next try is due in `seconds`; this one gives up its claim."""
    callback = session.get(Callback, callback_id)
    if callback is not None:
        callback.due_at = utcnow() + timedelta(seconds=seconds)
        callback.claimed_until = None


def finish(
    session: Session,
    callback_id: int,
    state: str,
    *,
    result: CallbackResult | None = None,
    error: str | None = None,
) -> None:
    callback = session.get(Callback, callback_id)
    if callback is not None:
        callback.state = state
        callback.result = dump_callback_result(result or CallbackResult())
        callback.error = redact(error) if error else None
        callback.finished_at = utcnow()
        callback.claimed_until = None


def recently_failed(session: Session, action: str, since: datetime) -> list[tuple[Job, Callback]]:
    """Jobs with a callback of `action` that failed for good after `since`, oldest first."""
    rows = session.execute(
        select(Job, Callback)
        .join(Callback, Callback.job_id == Job.id)
        .where(Callback.action == action, Callback.state == "failed", Callback.finished_at > since)
        .order_by(Callback.id)
    )
    return [(job, callback) for job, callback in rows]


def failures_of(session: Session, job_id: int, action: str) -> list[tuple[datetime, str]]:
    """When and why each of the job's callbacks of `action` failed for good, oldest first."""
    rows = session.execute(
        select(Callback.finished_at, Callback.error)
        .where(Callback.job_id == job_id, Callback.action == action, Callback.state == "failed")
        .order_by(Callback.id)
    )
    return [(finished, error or "no reason recorded") for finished, error in rows if finished]


def newest_callback(session: Session, job_id: int, action: str) -> int | None:
    """The id of the job's newest callback of `action`."""
    return session.scalar(
        select(func.max(Callback.id)).where(Callback.job_id == job_id, Callback.action == action)
    )


def supersede(session: Session, job_id: int, action: str, newest: int) -> None:
    """Retire the job's pending callbacks of `action` older than `newest`."""
    session.execute(
        update(Callback)
        .where(
            Callback.job_id == job_id,
            Callback.action == action,
            Callback.state == "pending",
            Callback.id < newest,
        )
        .values(state="superseded", finished_at=utcnow())
        .execution_options(synchronize_session=False)
    )


_INSERT = {
    # PostgreSQL returns a batch's rows in its order in one statement (insertmanyvalues).
    "postgresql": insert(Callback).returning(Callback.id, sort_by_parameter_order=True),
    # SQLite would insert row by row to return them in order: see `insert_callbacks`.
    "sqlite": insert(Callback).returning(Callback.id),
}


def insert_callbacks(conn: Connection, callbacks: Sequence[NewCallback]) -> list[int]:
    """Insert pending callbacks in one batched statement; their ids, in order. Commit, then
    publish them (the outbox order)."""
    if not callbacks:
        return []
    rows = [callback.row() for callback in callbacks]
    dialect = bound.dialect_of(conn)
    ids = [callback_id for (callback_id,) in conn.execute(_INSERT[dialect], rows)]
    # SQLite has one writer at a time and gives each new row the largest rowid so far plus one,
    # in the order the statement inserts them: ascending ids are the rows' order. Asking for
    # that order instead made SQLAlchemy send one INSERT per row.
    return sorted(ids) if dialect == "sqlite" else ids
