"""Group commit: one writer thread records routed triggers in batches, then publishes them.

While a batch is being written the next one queues up, so under load batches grow and the fixed
cost of a transaction (a connection, a commit, a Redis round trip) is shared; a lone trigger is
written at once. Each batch is one transaction (`ingress.intake.record`); its messages go out
only after the commit.

Kept because bench/ingress shows the plain path (each request writes its own transaction from
the thread pool) has no headroom: measured in one run on SQLite, it met the 200 requests/s
target (p99 21 ms) but saturated at about 300 requests/s with a p99 of a second, where this
writer took about 900 requests/s with a p99 near 50 ms.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Final, Generic, TypeAlias, TypeVar

from resolver.broker.publish import (
    Message,
    acknowledge_message,
    callback_message,
    job_message,
    send_messages,
)
from resolver.core import metrics, tracing
from resolver.core.logs import log
from resolver.ingress.intake import Accepted, Pending, record
from resolver.store.db import StoreUnavailable, kept_transaction

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

_RECORD_SECONDS: Final = metrics.INTAKE_SECONDS.labels("record")
_PUBLISH_SECONDS: Final = metrics.INTAKE_SECONDS.labels("publish")

WriteBatch = Callable[[Sequence[T]], Sequence[R | Exception]]
"""Writes a batch; returns one result per item, in order, or the exception that item failed with."""
MAX_BATCH: Final = 100
LINGER: Final = 0.0
"""Seconds a batch waits for company: none. Once a batch's fixed cost became small, waiting
saved less CPU at moderate rates than it added latency (at 200 requests/s, a p99 of 15 ms
without waiting against 20 ms with 2 ms of it and 29 ms with 8 ms)."""


@dataclass(frozen=True)
class _Waiter(Generic[R]):
    """A coroutine waiting on its event loop for an item's result."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[R]


Settled: TypeAlias = "R | BaseException"
_Entry: TypeAlias = "tuple[T, Future[R] | _Waiter[R]]"


class GroupWriter(Generic[T, R]):
    """Hands items to a single writer thread; each item's result arrives when its batch is done."""

    def __init__(
        self, write: WriteBatch[T, R], *, name: str, max_batch: int, linger: float = 0.0
    ) -> None:
        self._write = write
        self._name = name
        self._max_batch = max_batch
        self._linger = linger
        self._queue: queue.SimpleQueue[_Entry[T, R]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()

    def submit(self, item: T) -> Future[R]:
        """Queue `item` for the next batch."""
        future: Future[R] = Future()
        self._put((item, future))
        return future

    async def write(self, item: T) -> R:
        """Queue `item` and wait for its batch's result. The items of one batch that wait on one
        event loop are woken by a single call into it, not one wake-up each."""
        loop = asyncio.get_running_loop()
        waiter = _Waiter[R](loop, loop.create_future())
        self._put((item, waiter))
        return await waiter.future

    def _put(self, entry: _Entry[T, R]) -> None:
        self._queue.put(entry)
        self._ensure_thread()

    def _ensure_thread(self) -> None:
        # Started on first use, and again in a forked child, where the parent's thread is gone.
        if self._thread is not None and self._thread.is_alive():
            return
        with self._starting:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._write_batch(self._next_batch())

    def _next_batch(self) -> list[_Entry[T, R]]:
        """Wait for one item, then take what else comes within `linger` seconds (up to a full
        batch), leaving out cancelled ones."""
        batch = [self._queue.get()]
        deadline = time.monotonic() + self._linger
        while len(batch) < self._max_batch:
            try:
                batch.append(self._queue.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                break
        # A request cancelled while it waited (the server shutting down) is not written.
        return [(item, waiter) for item, waiter in batch if _claim(waiter)]

    def _write_batch(self, batch: list[_Entry[T, R]]) -> None:
        if not batch:
            return
        outcomes: Sequence[Settled[R]]
        try:
            outcomes = self._write([item for item, _ in batch])
        except BaseException as error:  # as concurrent.futures does: every request hears why
            outcomes = [error] * len(batch)
        _settle([waiter for _, waiter in batch], outcomes)


def _claim(waiter: Future[R] | _Waiter[R]) -> bool:
    """Whether the item is still wanted; a claimed Future can no longer be cancelled."""
    if isinstance(waiter, Future):
        return waiter.set_running_or_notify_cancel()
    return not waiter.future.cancelled()


def _settle(waiters: Sequence[Future[R] | _Waiter[R]], outcomes: Sequence[Settled[R]]) -> None:
    """Hand each waiter its outcome: Futures directly, coroutines one call per event loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[R], Settled[R]]]] = {}
    for waiter, outcome in zip(waiters, outcomes, strict=True):
        if isinstance(waiter, _Waiter):
            by_loop.setdefault(waiter.loop, []).append((waiter.future, outcome))
        elif isinstance(outcome, BaseException):
            waiter.set_exception(outcome)
        else:
            waiter.set_result(outcome)
    for loop, settled in by_loop.items():
        try:
            loop.call_soon_threadsafe(_resolve, settled)
        except RuntimeError:  # the loop has closed: nobody is waiting any more
            continue


def _resolve(settled: list[tuple[asyncio.Future[R], Settled[R]]]) -> None:
    for future, outcome in settled:
        if future.done():  # cancelled after its batch began
            continue
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


def submit(pending: Pending) -> Future[Accepted]:
    """Queue a trigger for the writer. The future resolves once its rows are committed and its
    messages published (or left to the reconciler, should Redis fail)."""
    return _INTAKE.submit(pending)


async def write(pending: Pending) -> Accepted:
    """`submit` for a coroutine on an event loop: what became of the trigger."""
    return await _INTAKE.write(pending)


def write_batch(batch: Sequence[Pending]) -> list[Accepted | Exception]:
    """Record a batch in one transaction, then publish. Should the batch fail for any reason but
    an unavailable database, each trigger is written alone, so that only a bad one fails."""
    try:
        return list(_write(batch))
    except StoreUnavailable:
        raise  # alone, each would fail the same way (and SQLite would wait out its busy timeout)
    except Exception as error:
        if len(batch) == 1:
            raise
        log(logger, logging.WARNING, "intake.batch_failed", size=len(batch), error=repr(error))
        return [_write_alone(pending) for pending in batch]


def _write_alone(pending: Pending) -> Accepted | Exception:
    try:
        [accepted] = _write([pending])
    except Exception as error:  # the trigger's own request answers with it
        return error
    return accepted


def _write(batch: Sequence[Pending]) -> list[Accepted]:
    started = time.monotonic()
    # A batch is one transaction for many requests: its span joins the first sampled one's trace.
    traced = next((p.trace for p in batch if tracing.sampled(p.trace)), batch[0].trace)
    with tracing.within(traced), tracing.span("ingress.intake", triggers=len(batch)):
        answers = _record(batch)
    recorded = time.monotonic()
    # Committed: the jobs and notices are durable, so their messages may go out.
    _publish(batch, answers)
    ended = time.monotonic()
    _RECORD_SECONDS.observe(recorded - started)
    _PUBLISH_SECONDS.observe(ended - recorded)
    metrics.INTAKE_BATCH_TRIGGERS.observe(len(batch))
    _log_batch(batch, answers, ended - started)
    return answers


def _record(batch: Sequence[Pending]) -> list[Accepted]:
    """Record the batch in one transaction on the connection this thread keeps. Should the
    database have dropped it (a restart, an idle timeout), the batch is written again, once, on a
    new one: nothing pings a connection before use. Written again after a commit whose answer
    was lost, each trigger is a copy of itself, answered with its job."""
    try:
        with kept_transaction() as conn:
            return record(conn, batch)
    except StoreUnavailable as error:
        if not error.connection_invalidated:
            raise
        log(logger, logging.WARNING, "intake.reconnect", error=repr(error))
    with kept_transaction() as conn:
        return record(conn, batch)


def _log_batch(batch: Sequence[Pending], answers: Sequence[Accepted], seconds: float) -> None:
    """One line per batch, naming its jobs: a line per request cost a tenth of the request."""
    by_kind: dict[str, list[str]] = {}
    for pending, accepted in zip(batch, answers, strict=True):
        what = f"{pending.provider}:{accepted.job_id}" if accepted.job_id else pending.provider
        by_kind.setdefault(accepted.kind, []).append(what)
    fields = {kind: ",".join(items) for kind, items in by_kind.items()}
    log(
        logger, logging.INFO, "intake.batch", size=len(batch), ms=round(seconds * 1000, 1), **fields
    )


def _publish(batch: Sequence[Pending], answers: Sequence[Accepted]) -> None:
    """One message per trigger, carrying the trace of the request it answers."""
    messages = [m for p, a in zip(batch, answers, strict=True) for m in _messages(p, a)]
    if not messages:
        return
    try:
        send_messages(messages)
    except Exception as error:  # the rows are committed: the reconciler publishes them later
        job_ids = [a.job_id for a in answers if a.job_id and a.message_id]
        callback_ids = [c for a in answers for c in a.callbacks]
        fields = {"jobs": job_ids, "callbacks": callback_ids, "error": repr(error)}
        log(logger, logging.WARNING, "webhook.publish_failed", **fields)


def _messages(pending: Pending, accepted: Accepted) -> list[Message]:
    """A new job with acknowledgements: one message, which the callbacks side turns into its 👀,
    its job message and its first status; one without: its job message. A notice: its own."""
    if accepted.job_id and accepted.message_id:
        message = acknowledge_message if accepted.callbacks else job_message
        return [message(accepted.job_id, accepted.message_id, pending.trace)]
    return [callback_message(c, pending.trace) for c in accepted.callbacks]


_INTAKE: Final = GroupWriter(
    write_batch, name="resolver-intake", max_batch=MAX_BATCH, linger=LINGER
)
