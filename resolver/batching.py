"""Group commit: one thread writes queued items in batches, each batch in one transaction.

While a batch is being written the next one queues up, so under load batches grow and the fixed
cost of a transaction (a connection, a commit, a Redis round trip) is shared; a lone item is
written at once, because no batch waits for company.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

WriteBatch = Callable[[Sequence[T]], Sequence[R | Exception]]
"""Writes a batch; returns one result per item, in order, or the exception that item failed with."""


class GroupWriter(Generic[T, R]):
    """Hands items to a single writer thread; each item's future resolves when its batch is done."""

    def __init__(self, write: WriteBatch[T, R], *, name: str, max_batch: int) -> None:
        self._write = write
        self._name = name
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[tuple[T, Future[R]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()

    def submit(self, item: T) -> Future[R]:
        """Queue `item` for the next batch."""
        future: Future[R] = Future()
        self._queue.put((item, future))
        self._ensure_thread()
        return future

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

    def _next_batch(self) -> list[tuple[T, Future[R]]]:
        """Wait for one item, then take whatever else has queued up, leaving out cancelled ones."""
        batch = [self._queue.get()]
        while len(batch) < self._max_batch:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        # A request whose client went away is not written; its sender will try again.
        return [(item, future) for item, future in batch if future.set_running_or_notify_cancel()]

    def _write_batch(self, batch: list[tuple[T, Future[R]]]) -> None:
        if not batch:
            return
        try:
            results = self._write([item for item, _ in batch])
        except Exception as error:  # the whole batch failed: every request hears why
            for _, future in batch:
                future.set_exception(error)
            return
        for (_, future), result in zip(batch, results, strict=True):
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)
