"""Sending a recorded callback: one try, one attempt row, and when to try again.

The action (`ACTIONS`, by the callback's `action`) calls the job's provider through
`integrations.registry`. It raises TransientCallbackError (5xx, network, rate limit: tried
again with backoff, honouring Retry-After) or PermanentCallbackError (other 4xx: recorded and
never tried again). An action gets its payload typed (`contract.callbacks`) with the row's id;
a payload that does not read fails its callback, saying why. The Celery task that calls `send`
is `resolver.tasks.deliver`.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Generic

from resolver.callbacks import actions
from resolver.contract.callbacks import (
    CallbackPayloadError,
    CallbackResult,
    CallbackResultError,
    NoticePost,
    P,
    PullToOpen,
    PullToUpdate,
    Reaction,
    Reply,
    ReviewToPost,
    Sending,
    StatusUpdate,
    ThreadReply,
    read_payload,
)
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.contract.outbound import REACT, STATUS, THREAD_REPLY
from resolver.contract.results import ResultError
from resolver.contract.review import POST_REVIEW
from resolver.core import metrics
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.core.states import JobState
from resolver.features.review_requests.callbacks import send_review
from resolver.store import callbacks, jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback, Job, utcnow
from resolver.store.notices import NOTICE_ACTION
from resolver.store.slots import PARKED

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

MAX_TRIES: Final = 8
MAX_BACKOFF: Final = 300.0
CLAIM_SECONDS: Final = 150.0
"""How long a try owns its callback: longer than `deliver`'s time limit (120 s), which the
threads pool does not enforce, so only a try that outlives that limit can meet a copy; short
enough that a callback whose worker was killed mid-try is sent again within a few minutes."""


@dataclass(frozen=True)
class Action(Generic[P]):
    """A kind of callback: its payload's model, and `send(session, sending, settings) ->
    result`, the result stored on the row once sent. The session is the try's: `send` ends a
    step in it (`store.db.end_step`) before each post, and what it leaves is committed when it
    returns, rolled back when it raises."""

    payload: type[P]
    send: Callable[[Session, Sending[P], Settings], CallbackResult]

    def __call__(
        self, session: Session, callback_id: int, provider: str, data: object, settings: Settings
    ) -> CallbackResult:
        """Send the row's stored payload `data`; one that does not read fails for good, as
        does one whose row's result, or its job's, does not."""
        try:
            payload = read_payload(self.payload, data)
            return self.send(session, Sending(callback_id, provider, payload), settings)
        except (CallbackPayloadError, CallbackResultError, ResultError) as error:
            raise PermanentCallbackError(str(error)) from None


Sender = Callable[["Session", int, str, object, Settings], CallbackResult]
"""An `Action` as `send` calls it: (session, callback id, provider, stored payload, settings)."""
ACTIONS: Final[dict[str, Sender]] = {
    actions.STATUS: Action(StatusUpdate, actions.send_status),
    actions.REACT: Action(Reaction, actions.send_react),
    actions.REPLY: Action(Reply, actions.send_reply),
    NOTICE_ACTION: Action(NoticePost, actions.send_notice),
    actions.OPEN_PULL: Action(PullToOpen, actions.send_open_pull),
    actions.UPDATE_PULL: Action(PullToUpdate, actions.send_update_pull),
    THREAD_REPLY: Action(ThreadReply, actions.send_thread_reply),
    POST_REVIEW: Action(ReviewToPost, send_review),
}


def backoff(tries: int, retry_after: float | None) -> float:
    """At least the provider's Retry-After (plus a little, for clock skew); else exponential
    backoff with full jitter; always capped."""
    if retry_after is not None:
        return min(retry_after + random.uniform(0.2, 1.0), MAX_BACKOFF)
    return random.uniform(0, min(MAX_BACKOFF, 2.0 ** (tries + 1)))


# Each of these commits on its own, as when the store opened the transactions: a try's attempt
# row is kept even when what follows it fails, and the row's end is never rolled back with it.
@dataclass(frozen=True)
class Acknowledgement:
    """What a new job's one message from intake has left to do (`acknowledge`)."""

    pending: tuple[tuple[int, str], ...]
    """Its 👀 and first status not yet sent: (callback id, action)."""
    message_id: str | None
    """Its job message's id, while it is queued and not parked; else None."""


def acknowledgement(job_id: int) -> Acknowledgement:
    """Read, in one transaction, what `acknowledge` has left to send for `job_id`."""
    with session_scope() as session:
        pending = callbacks.pending_of(session, job_id, (REACT, STATUS))
        job = session.get(Job, job_id)
        queued = job is not None and job.state == JobState.QUEUED and job.message_id != PARKED
        return Acknowledgement(tuple(pending), job.message_id if job and queued else None)


def _record_attempt(callback_id: int, outcome: str, error: CallbackError | None) -> int:
    with session_scope() as session:
        return callbacks.record_attempt(session, callback_id, outcome, error)


def _set_due(callback_id: int, seconds: float) -> None:
    with session_scope() as session:
        callbacks.set_due(session, callback_id, seconds)


def _finish(
    callback_id: int, state: str, *, result: CallbackResult | None = None, error: str | None = None
) -> None:
    with session_scope() as session:
        callbacks.finish(session, callback_id, state, result=result, error=error)


def _give_up(callback_id: int, action: str, error: str) -> None:
    """End the callback as failed for good (the watchdog reads such rows), counted by action."""
    _finish(callback_id, "failed", error=error)
    metrics.CALLBACKS_FAILED.labels(action).inc()


def send(callback_id: int, settings: Settings) -> float | None:
    """Try a callback once, as its one owner for the while (`callbacks.claim`). Returns seconds
    to wait before the next try, or None when done (or when another try owns it)."""
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        if callback is None or callback.state != "pending":
            state = None if callback is None else callback.state
            log(logger, logging.INFO, "callback.skipped", callback=callback_id, state=state)
            return None
        provider, action = callback.provider, callback.action
        payload = callback.payload
        received = jobs.received_at(session, callback.job_id)
        claimed = callbacks.claim(session, callback_id, CLAIM_SECONDS)
    if not claimed:  # another try owns it, or it ended meanwhile: its owner decides what follows
        log(logger, logging.INFO, "callback.claimed_elsewhere", callback=callback_id)
        return None
    handler = ACTIONS.get(action)
    if handler is None:
        _give_up(callback_id, action, f"no callback action {action!r}")
        return None
    try:
        with session_scope() as session:
            result = handler(session, callback_id, provider, payload, settings)
    except TransientCallbackError as error:
        tries = _record_attempt(callback_id, "transient", error)
        metrics.CALLBACK_ATTEMPTS.labels(action, "transient").inc()
        log(logger, logging.WARNING, "callback.transient", callback=callback_id, tries=tries)
        if tries >= MAX_TRIES:
            _give_up(callback_id, action, f"gave up after {tries} tries: {error}")
            return None
        wait = backoff(tries, error.retry_after)
        _set_due(callback_id, wait)
        return wait
    except PermanentCallbackError as error:
        _record_attempt(callback_id, "permanent", error)
        metrics.CALLBACK_ATTEMPTS.labels(action, "permanent").inc()
        log(logger, logging.WARNING, "callback.failed", callback=callback_id, status=error.status)
        _give_up(callback_id, action, str(error))
        return None
    except Exception as error:  # a bug, not the provider: record it once, never loop on it
        logger.exception("callback.crashed", extra={"fields": {"callback": callback_id}})
        failure = PermanentCallbackError(f"internal error: {type(error).__name__}")
        _record_attempt(callback_id, "permanent", failure)
        metrics.CALLBACK_ATTEMPTS.labels(action, "permanent").inc()
        _give_up(callback_id, action, str(failure))
        return None
    _record_attempt(callback_id, "ok", None)
    _finish(callback_id, "sent", result=result)
    metrics.CALLBACK_ATTEMPTS.labels(action, "ok").inc()
    seen = metrics.since(received, utcnow())
    if action == REACT and seen is not None:
        metrics.ACKNOWLEDGE_SECONDS.observe(seen)
    log(logger, logging.INFO, "callback.sent", callback=callback_id, action=action)
    return None
