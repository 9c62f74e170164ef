"""Outbound calls to providers: recorded first, sent by a Celery task, one attempt row per try.

A provider's client registers an executor, `executor(action, payload) -> result`, that raises
TransientCallbackError (5xx, network, rate limit: retried with backoff, honouring Retry-After)
or PermanentCallbackError (other 4xx: recorded and never retried). Every payload a handler
gets carries its `callback_id`.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Final

from celery import shared_task
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from resolver.broker.celery_app import CALLBACKS_QUEUE, get_celery
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.core.logs import log, redact
from resolver.store.db import session_scope
from resolver.store.models import Callback, CallbackAttempt, utcnow

logger = logging.getLogger(__name__)

DELIVER: Final = "resolver.callbacks.deliver"
MAX_TRIES: Final = 8
MAX_BACKOFF: Final = 300.0
STALL_GRACE: Final = 60.0

Executor = Callable[[str, dict[str, Any]], dict[str, Any]]
EXECUTORS: dict[str, Executor] = {}
# Actions every provider shares (resolver.callbacks.replies), called with (provider, payload).
Action = Callable[[str, dict[str, Any]], dict[str, Any]]
ACTIONS: dict[str, Action] = {}


def register_executor(provider: str, executor: Executor) -> None:
    """Make `executor` send the callbacks of `provider`."""
    EXECUTORS[provider] = executor


def register_action(action: str, handler: Action) -> None:
    """Make `handler` send every provider's callbacks of `action`."""
    ACTIONS[action] = handler


def record_callback(
    session: Session,
    provider: str,
    action: str,
    payload: dict[str, Any],
    job_id: int | None = None,
) -> Callback:
    """Insert a pending callback. Commit, then `publish_callback(id)` (the outbox order)."""
    callback = Callback(provider=provider, action=action, payload=payload, job_id=job_id)
    session.add(callback)
    session.flush()
    return callback


def publish_callback(callback_id: int, countdown: float | None = None) -> None:
    get_celery().send_task(DELIVER, args=[callback_id], queue=CALLBACKS_QUEUE, countdown=countdown)


def stalled_callbacks(session: Session, grace_seconds: float = STALL_GRACE) -> list[int]:
    """Pending callbacks well past their due time: their message was lost (a worker killed
    while holding it, Redis emptied). Sending one twice is safe: a sent callback is skipped."""
    cutoff = utcnow() - timedelta(seconds=grace_seconds)
    overdue = func.coalesce(Callback.due_at, Callback.created_at) < cutoff
    return list(session.scalars(select(Callback.id).where(Callback.state == "pending", overdue)))


def mark_posting(callback_id: int) -> datetime | None:
    """Record that this callback is about to post a message. Returns when an earlier try did
    the same (its post may have been made and its answer lost), else None."""
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        if callback is None:
            return None
        earlier = (callback.result or {}).get("posting")
        if isinstance(earlier, str):
            return datetime.fromisoformat(earlier)
        callback.result = {**(callback.result or {}), "posting": utcnow().isoformat()}
    return None


def backoff(tries: int, retry_after: float | None) -> float:
    """At least the provider's Retry-After (plus a little, for clock skew); else exponential
    backoff with full jitter; always capped."""
    if retry_after is not None:
        return min(retry_after + random.uniform(0.2, 1.0), MAX_BACKOFF)
    return random.uniform(0, min(MAX_BACKOFF, 2.0 ** (tries + 1)))


def _attempt(callback_id: int, outcome: str, error: CallbackError | None) -> int:
    """Record one try; returns how many tries there have been."""
    with session_scope() as session:
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


def _due(callback_id: int, seconds: float) -> None:
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        if callback is not None:
            callback.due_at = utcnow() + timedelta(seconds=seconds)


def _finish(
    callback_id: int, state: str, *, result: dict[str, Any] | None = None, error: str | None = None
) -> None:
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        if callback is not None:
            callback.state = state
            callback.result = result or {}
            callback.error = redact(error) if error else None
            callback.finished_at = utcnow()


def _handler(provider: str, action: str) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    shared = ACTIONS.get(action)
    if shared is not None:
        return lambda payload: shared(provider, payload)
    executor = EXECUTORS.get(provider)
    if executor is not None:
        return lambda payload: executor(action, payload)
    return None


def send(callback_id: int) -> float | None:
    """Try a callback once. Returns seconds to wait before the next try, or None when done."""
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        if callback is None or callback.state != "pending":
            state = None if callback is None else callback.state
            log(logger, logging.INFO, "callback.skipped", callback=callback_id, state=state)
            return None
        provider, action = callback.provider, callback.action
        payload = {**callback.payload, "callback_id": callback_id}
    handler = _handler(provider, action)
    if handler is None:
        _finish(callback_id, "failed", error=f"no callback processor for {provider}")
        return None
    try:
        result = handler(payload)
    except TransientCallbackError as error:
        tries = _attempt(callback_id, "transient", error)
        log(logger, logging.WARNING, "callback.transient", callback=callback_id, tries=tries)
        if tries >= MAX_TRIES:
            _finish(callback_id, "failed", error=f"gave up after {tries} tries: {error}")
            return None
        wait = backoff(tries, error.retry_after)
        _due(callback_id, wait)
        return wait
    except PermanentCallbackError as error:
        _attempt(callback_id, "permanent", error)
        log(logger, logging.WARNING, "callback.failed", callback=callback_id, status=error.status)
        _finish(callback_id, "failed", error=str(error))
        return None
    except Exception as error:  # a bug, not the provider: record it once, never loop on it
        logger.exception("callback.crashed", extra={"fields": {"callback": callback_id}})
        failure = PermanentCallbackError(f"internal error: {type(error).__name__}")
        _attempt(callback_id, "permanent", failure)
        _finish(callback_id, "failed", error=str(failure))
        return None
    _attempt(callback_id, "ok", None)
    _finish(callback_id, "sent", result=result)
    log(logger, logging.INFO, "callback.sent", callback=callback_id, action=action)
    return None


@shared_task(name=DELIVER, acks_late=True, max_retries=0, time_limit=120, soft_time_limit=100)
def deliver(callback_id: int) -> None:
    """Send one callback; a transient failure schedules the next try as a new message."""
    wait = send(int(callback_id))
    if wait is not None:
        publish_callback(int(callback_id), countdown=wait)
