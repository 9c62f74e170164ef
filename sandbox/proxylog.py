"""The egress proxy's access log, read through one shell attached to the proxy's container.

The shell first waits for Squid to listen, then holds the log file open and, for each request
written to its input, hands over what Squid appended since the last one. A read is one round
trip on a socket already open: no exec (tens of milliseconds each on a loaded host) and no lag
of the engine's copy of a container's output.

Squid logs a request once it has written the response, so a client can have its answer a
moment before the log line exists. A read therefore first sends Squid a request of its own (to
an address every policy refuses, answered without a DNS lookup) and reads on until that one is
logged: Squid runs one event loop, so whatever it finished before is logged by then.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import time
from typing import Final

from docker.utils.socket import frames_iter

from sandbox import squid
from sandbox.engine import SandboxError, client, engine_errors
from sandbox.execution import close_socket, readable, wait_exit_code

READY_TIMEOUT: Final = 30.0
SETTLE: Final = 2.0
"""Seconds a read waits for its own request to be logged."""
TIMED_OUT: Final = 3
_POLL: Final = 0.01
# Squid logs its answer to the mark within a turn of its loop: a shorter wait between reads.
_READ_AGAIN: Final = 0.002
_READY: Final = b"\0ready\n"
_ONLY_READ: Final = "-"
MARK: Final = "resolver-mark-"
# How many times Squid has opened its port (it writes LISTENING to cache.log each time).
LISTENED: Final = (
    f'c=$(grep -c "{squid.LISTENING}" {squid.CACHE_LOG} 2>/dev/null); echo "${{c:-0}}"'
)


def wait_listening(timeout: float) -> str:
    """bash that waits until Squid has opened its port more than $1 times, and exits TIMED_OUT
    once `timeout` seconds have passed by the clock (bash's SECONDS), not by a count of polls,
    which a loaded host stretches."""
    return (
        f'end=$((SECONDS + {max(1, round(timeout))})); while [ "$({LISTENED})" -le "$1" ]; do '
        f'[ "$SECONDS" -ge "$end" ] && exit {TIMED_OUT}; sleep {_POLL}; done'
    )


WAIT: Final = wait_listening(READY_TIMEOUT)
FREE_EVERY: Final = 8 << 20
"""Bytes of the access log read since they were last given back, after which a read gives
them back. The log lives on the proxy's 64 MB tmpfs, and Squid stops when a write to its log
fails (it fails closed): kept whole, the log ended a job's network after about 400,000
requests. The part already read becomes a hole (`fallocate --punch-hole`): the file keeps its
size, Squid appends at its end, and the reader's offset stays good."""
_GIVE_BACK: Final = (
    # The reader's offset, from the kernel, by builtins alone (no process started).
    'while read -r k v; do [ "$k" = pos: ] && p=$v && break; done < /proc/$$/fdinfo/3; '
    f"if [ $((p - freed)) -ge {FREE_EVERY} ]; then "
    f"fallocate -p -o $freed -l $((p / 4096 * 4096 - freed)) {squid.ACCESS_LOG} 2>/dev/null; "
    "freed=$((p / 4096 * 4096)); fi; "
)
# bash, for its /dev/tcp: the mark is sent and its answer's first line read, then the new lines.
_SERVE: Final = (
    f"{WAIT} || exit $?; : >> {squid.ACCESS_LOG} && exec 3< {squid.ACCESS_LOG} || exit 1; "
    "freed=0; printf '\\0ready\\n'; "
    "while read -r req; do "
    f'if [ "$req" != "{_ONLY_READ}" ]; then '
    "{ printf 'GET http://127.0.0.1:9/%s HTTP/1.0\\r\\n\\r\\n' \"$req\" >&4 && read -r _ <&4; } "
    f"4<>/dev/tcp/127.0.0.1/{squid.PORT}; fi; "
    f"cat <&3; {_GIVE_BACK}printf '\\0%s\\n' \"$req\"; done"
)


class ProxyLogError(SandboxError):
    """The proxy's log shell ended: `code` is its exit code (TIMED_OUT: Squid never listened)."""

    def __init__(self, code: int):
        super().__init__(f"the egress proxy's log reader ended with code {code}")
        self.code = code


class ProxyLog:
    """The attached shell; `open` returns once Squid listens."""

    def __init__(self, container_id: str, user: int):
        api = client().api
        with engine_errors("read egress proxy's log"):
            self._exec_id: str = api.exec_create(
                container_id,
                ["bash", "-c", _SERVE, "bash", "0"],
                stdin=True,
                user=f"{user}:{user}",
                workdir=squid.DIR,
            )["Id"]
            self._sock = api.exec_start(self._exec_id, socket=True)
        self._raw: socket.socket = getattr(self._sock, "_sock", self._sock)
        self._frames = frames_iter(self._sock, tty=False)
        self._pending = b""
        self._lock = threading.Lock()

    @classmethod
    def open(cls, container_id: str, user: int) -> ProxyLog:
        """Start the shell and wait until Squid listens; ProxyLogError if it never does."""
        log = cls(container_id, user)
        try:
            with engine_errors("start egress proxy"):
                log._raw.settimeout(READY_TIMEOUT + SETTLE)
                log._until(_READY)
        except BaseException:
            log.close()
            raise
        return log

    def read(self) -> str:
        """The complete lines Squid logged since the last read, up to a request of its own."""
        mark = MARK + secrets.token_hex(8)
        deadline = time.monotonic() + SETTLE
        with self._lock:
            data = self._pending + self._ask(mark)
            while not _logged(data, mark) and time.monotonic() < deadline:
                time.sleep(_READ_AGAIN)
                data += self._ask(_ONLY_READ)
            text, _, self._pending = data.rpartition(b"\n")
        lines = text.decode(errors="replace").splitlines()
        return "\n".join(line for line in lines if mark not in line)

    def _ask(self, request: str) -> bytes:
        with engine_errors("read egress proxy's log"):
            self._raw.sendall(f"{request}\n".encode())
            return self._until(b"\0" + request.encode() + b"\n")

    def close(self) -> None:
        """Hang up; the shell reads the end of its input and exits."""
        with contextlib.suppress(OSError):  # already closed
            self._raw.shutdown(socket.SHUT_RDWR)
        close_socket(self._sock)

    def _until(self, marker: bytes) -> bytes:
        """What the shell wrote before `marker`, within the socket's timeout. The wait is this
        method's own: the engine's frame reader polls the socket with no timeout at all, so a
        stream the engine holds open without a word (seen once under load: the shell was gone
        from the container, its stream never ended) would otherwise be waited for forever."""
        budget = self._raw.gettimeout()
        deadline = time.monotonic() + (READY_TIMEOUT + SETTLE if budget is None else budget)
        data = bytearray()  # appended to in place, and searched only where new: a read of a
        searched = 0  # few MB of log came in about a thousand frames
        while (at := data.find(marker, searched)) < 0:
            searched = max(0, len(data) - len(marker) + 1)
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0 or not readable(self._raw, remaining):
                    raise TimeoutError
                frame = next(self._frames, None)
            except TimeoutError:
                raise SandboxError("the egress proxy's log reader did not answer") from None
            if frame is None:
                raise ProxyLogError(wait_exit_code(client().api, self._exec_id))
            stream, chunk = frame
            if stream == 1:
                data += chunk
        return bytes(data[:at])


def _logged(data: bytes, mark: str) -> bool:
    """Whether `data` holds the whole line of the request `mark`."""
    at = data.find(mark.encode())
    return at >= 0 and b"\n" in data[at:]
