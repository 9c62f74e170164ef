"""Time to first byte over one keep-alive connection, as a browser would fetch a page: raw
sockets, so the client adds no parsing between the server's first byte and the clock."""

from __future__ import annotations

import re
import socket
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Target:
    label: str
    path: str
    cookie: str = ""
    """The whole `Cookie` header value; empty for a page that needs no sign-in."""


@dataclass
class Timings:
    first_byte: list[float] = field(default_factory=list)  # ms
    last_byte: list[float] = field(default_factory=list)  # ms
    statuses: Counter[int] = field(default_factory=Counter)
    size: int = 0
    """Body bytes of the last response."""


def percentile(values: list[float], percent: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


class Connection:
    """One HTTP/1.1 connection to the server, opened again if the server closed it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def get(self, target: Target) -> tuple[float, float, int, int]:
        """(ms to the first byte, ms to the last, status, body bytes) of one GET."""
        try:
            return self._get(target)
        except ConnectionError:  # an idle connection the server closed: once more, anew
            self.close()
            return self._get(target)

    def _get(self, target: Target) -> tuple[float, float, int, int]:
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port))
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cookie = f"Cookie: {target.cookie}\r\n" if target.cookie else ""
        request = f"GET {target.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{cookie}\r\n".encode()
        started = time.perf_counter()
        self.sock.sendall(request)
        received = self._receive()
        first = time.perf_counter()
        while b"\r\n\r\n" not in received:
            received += self._receive()
        head, _, body = received.partition(b"\r\n\r\n")
        length = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
        if length is None:
            raise RuntimeError(f"{target.path}: a response without Content-Length")
        while len(body) < int(length.group(1)):
            body += self._receive()
        done = time.perf_counter()
        status = int(head.split(b" ", 2)[1])
        return (first - started) * 1000, (done - started) * 1000, status, len(body)

    def _receive(self) -> bytes:
        assert self.sock is not None
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        return chunk


def measure(port: int, targets: list[Target], requests: int, warm_up: int) -> dict[str, Timings]:
    """`warm_up` + `requests` rounds, one GET of each target per round, one after another; only
    the last `requests` rounds count. Taking turns spreads any drift of the machine's speed
    over every target alike."""
    timings = {target.label: Timings() for target in targets}
    connection = Connection(port)
    try:
        for round_number in range(warm_up + requests):
            for target in targets:
                first, last, status, size = connection.get(target)
                if round_number < warm_up:
                    continue
                found = timings[target.label]
                found.first_byte.append(first)
                found.last_byte.append(last)
                found.statuses[status] += 1
                found.size = size
    finally:
        connection.close()
    return timings
