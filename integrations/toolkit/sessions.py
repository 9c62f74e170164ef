"""The toolkit's `Limits` for the clients built on requests: a transport adapter that reads each
answer through a budget, a network read at a time and after urllib3 has decoded it (urllib3
inflates no more than it is asked for), and fails past its deadline or its cap. requests' own
timeout bounds each read, and it reads an answer whole. Its connections wait in each read no
longer than the call has left (`_HeldReads`), the status line and headers included."""

from __future__ import annotations

import http.client
import io
import socket
from collections.abc import Iterator
from typing import Any, Final

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, PoolManager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import ReadTimeoutError

from integrations.toolkit.limits import (
    API_CALL,
    Budget,
    CapReachedError,
    DeadlineReachedError,
    Limits,
    read_seconds,
    spending,
)

Timeout = float | tuple[float | None, float | None] | None


class AnswerTooLargeError(requests.exceptions.ContentDecodingError):
    """An answer larger than its cap: one that cannot be read, as a body that does not decode."""


class BoundedAdapter(HTTPAdapter):
    """An adapter that holds each request to `limits`: its timeouts shortened to the time left,
    its answer read within the deadline and up to the cap (a deadline passed is a
    `ReadTimeout`)."""

    def __init__(self, limits: Limits = API_CALL) -> None:
        super().__init__()
        self.limits = limits

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Timeout = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: dict[str, str] | None = None,
    ) -> requests.Response:
        budget = Budget(self.limits)
        timeout = _within(timeout, budget.seconds_left())
        with spending(budget):
            response = super().send(request, stream, timeout, verify, cert, proxies)
        response.raw = _BoundedBody(response.raw, budget)
        return response

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        _hold(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        return _hold(super().proxy_manager_for(proxy, **proxy_kwargs))


def mount_bounded(session: requests.Session, limits: Limits = API_CALL) -> None:
    """Send every request of `session` through a `BoundedAdapter`."""
    for prefix in ("https://", "http://"):
        session.mount(prefix, BoundedAdapter(limits))


def _within(timeout: object, left: float) -> Timeout:
    if isinstance(timeout, tuple):
        connect, read = timeout
        return min(connect or left, left), min(read or left, left)
    return min(timeout, left) if isinstance(timeout, int | float) else left


class _HeldResponse(http.client.HTTPResponse):
    """http.client's answer, read from the socket through `_HeldReads`."""

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(_HeldSocket(sock), *args, **kwargs)  # type: ignore[arg-type]


class _HeldSocket:
    """What http.client asks of a connection's socket to read an answer: one file to read."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def makefile(self, *_args: Any, **_kwargs: Any) -> io.BufferedReader:
        """The file http.client reads its answer from (it asks for "rb")."""
        return io.BufferedReader(_HeldReads(self._sock, self._sock.makefile("rb", buffering=0)))


class _HeldReads(io.RawIOBase):
    """A socket's reads, each waiting no longer than the call in progress has left: a read's
    timeout bounds one read, so a status line sent a byte at a time was bounded only by the
    number of bytes."""

    def __init__(self, sock: socket.socket, raw: socket.SocketIO) -> None:
        self._sock, self._raw = sock, raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        asked = self._sock.gettimeout()
        try:
            self._sock.settimeout(read_seconds(asked))
        except DeadlineReachedError as error:
            raise TimeoutError(str(error)) from None  # what urllib3 reads as a read timeout
        try:
            return self._raw.readinto(buffer)
        finally:
            self._sock.settimeout(asked)

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()
        super().close()


class _HeldHTTPConnection(HTTPConnection):
    response_class = _HeldResponse


class _HeldHTTPSConnection(HTTPSConnection):
    response_class = _HeldResponse


class _HeldHTTPPool(HTTPConnectionPool):
    ConnectionCls = _HeldHTTPConnection


class _HeldHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HeldHTTPSConnection


_HELD_POOLS: Final = {"http": _HeldHTTPPool, "https": _HeldHTTPSPool}


def _hold(manager: PoolManager) -> PoolManager:
    """`manager`, its connections reading through `_HeldReads` (a SOCKS proxy's keep theirs)."""
    if set(manager.pool_classes_by_scheme.values()) <= {HTTPConnectionPool, HTTPSConnectionPool}:
        manager.pool_classes_by_scheme = _HELD_POOLS
    return manager


class _BoundedBody:
    """urllib3's answer, whose decoded stream (what requests reads) spends the budget."""

    def __init__(self, raw: Any, budget: Budget) -> None:
        self._raw = raw
        self._budget = budget

    def stream(self, amt: int = 65536, decode_content: bool | None = None) -> Iterator[bytes]:
        """The body, a network read at a time (urllib3's `stream` blocks until `amt` bytes
        have come, however slowly), each read spent before it is yielded."""
        try:
            while chunk := self._read1(amt, decode_content):
                self._budget.spend(len(chunk))
                yield chunk
        except (DeadlineReachedError, ReadTimeoutError) as error:
            raise requests.exceptions.ReadTimeout(str(error)) from None
        except CapReachedError as error:
            raise AnswerTooLargeError(str(error)) from None

    def _read1(self, amt: int, decode_content: bool | None) -> bytes:
        with spending(self._budget):
            chunk: bytes = self._raw.read1(amt, decode_content=decode_content)
            return chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)
