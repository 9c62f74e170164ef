"""How long a provider API call may take and how much of its answer is read, written once.

A client library's timeout bounds each read, not the call: a server that sends one byte
every few seconds held a worker thread for as long as it liked, and an answer was read whole
however large, a gzip body of 127 KB growing to 128 MB in memory. `Budget` is one call's
deadline and its bytes left; `Inflater` decompresses step by step, so no step outgrows what
is left. The adapters for httpx (`http`) and requests (`sessions`) spend it as the body
arrives, after decoding, and hold every network read of the call to its deadline
(`read_seconds`): a server that sent its status line and headers a byte at a time was bounded
only by the per-read timeout times the number of reads. It imports no HTTP client.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final

CALL_SECONDS: Final = 30.0
"""The longest a provider API call takes from its request to its answer's last byte: what
each read was allowed before, now the whole call's deadline."""

MAX_ANSWER_BYTES: Final = 10 * 1024 * 1024
"""The most of an API answer read, after decoding. The largest answers Resolver reads are
pages of 100 comments; at GitHub's limit of 65,536 characters a comment that is 6.5 MB of
JSON. Ten megabytes leave room for that and keep a huge body or a gzip bomb from growing a
worker's memory by more."""

INFLATE_STEP: Final = 64 * 1024
"""The most one step of decompression yields, so a bomb is stopped within one step of its
cap instead of after a whole network read has been inflated."""

ACCEPTED_ENCODING: Final = "gzip"
"""The only compression asked for; an answer in another one is unusable."""


class CapReachedError(Exception):
    """The answer, decoded, is larger than the call's cap (each adapter raises it as its
    library's error of an unreadable answer)."""


class DeadlineReachedError(Exception):
    """The answer was still arriving when the call's deadline passed (each adapter raises it
    as its library's timeout)."""


class UnaskedEncodingError(Exception):
    """The answer is compressed in a way that was not asked for, or its data is corrupt."""


@dataclass(frozen=True)
class Limits:
    """One call's deadline and its answer's size cap; tests make them small."""

    seconds: float = CALL_SECONDS
    max_bytes: int = MAX_ANSWER_BYTES


API_CALL: Final = Limits()
"""What an API call gets, unless a test or a call that knows better says otherwise."""

TAIL_SECONDS: Final = 120.0
"""The longest a log's tail is read: tens of megabytes may be read to reach it."""

TAIL_OVERSHOOT: Final = 1024 * 1024
"""What a read that stops itself at its budget may go over it by (one chunk, 64 KB at most)."""


def tail_limits(budget: int) -> Limits:
    """The limits of a log's tail, read up to `budget` bytes by the reader itself: its cap is
    a backstop past the budget, its deadline TAIL_SECONDS."""
    return Limits(seconds=TAIL_SECONDS, max_bytes=budget + TAIL_OVERSHOOT)


class Budget:
    """What is left of one call's limits, from the moment it was started."""

    def __init__(self, limits: Limits) -> None:
        self._end = time.monotonic() + limits.seconds
        self._left = limits.max_bytes

    def seconds_left(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def spend(self, size: int) -> None:
        """Count `size` bytes of the answer as arrived; raises once the deadline has passed
        or the answer has grown past its cap."""
        if time.monotonic() > self._end:
            raise DeadlineReachedError("the answer was still arriving after its deadline")
        self._left -= size
        if self._left < 0:
            raise CapReachedError("the answer is larger than its cap")

    def chunks(self, chunks: Iterator[bytes], inflater: Inflater | None) -> Iterator[bytes]:
        """The answer's decoded chunks, each spent before it is yielded."""
        for chunk in chunks:
            self.spend(0)  # the deadline, also for a chunk that decodes to nothing yet
            for part in inflater.inflate(chunk) if inflater else (chunk,):
                self.spend(len(part))
                yield part
        for part in inflater.finish() if inflater else ():
            self.spend(len(part))
            yield part


_SPENDING: ContextVar[Budget | None] = ContextVar("spending", default=None)
"""The budget of the call whose network reads run now, in this thread (or task)."""


@contextmanager
def spending(budget: Budget) -> Iterator[None]:
    """Within, each network read of the call is held to `budget`'s deadline (`read_seconds`)."""
    token = _SPENDING.set(budget)
    try:
        yield
    finally:
        _SPENDING.reset(token)


def read_seconds(asked: float | None) -> float | None:
    """How long one network read (or a connect) may wait: `asked` (None: without end), or
    less when the call in progress has less left. Raises DeadlineReachedError when it has
    none; outside a call, `asked`."""
    budget = _SPENDING.get()
    if budget is None:
        return asked
    left = budget.seconds_left()
    if left <= 0:
        raise DeadlineReachedError("the answer was still arriving after its deadline")
    return left if asked is None else min(asked, left)


class Inflater:
    """A gzip or zlib stream decompressed INFLATE_STEP bytes at a time."""

    def __init__(self) -> None:
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib, by its header

    @staticmethod
    def of(content_encoding: str | None) -> Inflater | None:
        """The decoder of an answer's `Content-Encoding`: None for none (`identity`)."""
        encoding = (content_encoding or "identity").strip().lower()
        if encoding in ("", "identity"):
            return None
        if encoding in ("gzip", "x-gzip", "deflate"):
            return Inflater()
        raise UnaskedEncodingError(f"an answer in {encoding[:40]!r}, which was not asked for")

    def inflate(self, data: bytes) -> Iterator[bytes]:
        try:
            while data and not self._zlib.eof:
                part = self._zlib.decompress(data, INFLATE_STEP)
                data = self._zlib.unconsumed_tail
                if part:
                    yield part
        except zlib.error as error:
            raise UnaskedEncodingError(f"a compressed answer that is corrupt: {error}") from None

    def finish(self) -> Iterator[bytes]:
        """What a step held back when the input ended with it (zlib keeps it until asked)."""
        while not self._zlib.eof and (part := self._zlib.decompress(b"", INFLATE_STEP)):
            yield part
