"""A long-lived process in a sandbox with its stdin and stdout attached: an MCP server that
speaks over stdio, talked to by the host through the engine's exec socket.

The process leads its own process group (an exec does), whose id it records first, so that
`close` can kill it with everything it started. It gets no environment beyond the image's.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Final

from docker.utils.socket import frames_iter

from sandbox.engine import SandboxError, client, engine_errors
from sandbox.execution import capture, close_socket
from sandbox.naming import new_token
from sandbox.policy import WORKDIR

# $1 the file for the group id, then the program and its arguments.
_LAUNCH: Final = r"""
read -r _ _ _ _ __g _ < /proc/$$/stat
echo "$__g" > "$1"
shift
exec "$@"
"""
_KILL: Final = (
    r"""read -r g < "$1" 2>/dev/null && kill -KILL -- "-$g" 2>/dev/null; rm -f "$1"; true"""
)
# In the container's own /tmp (a tmpfs of its own), never the host's.
_GROUP_FILES: Final = "/tmp/.resolver-attached-"  # noqa: S108
STDOUT: Final = 1
STDERR_KEPT: Final = 4000


class Attached:
    """One process's stdin (write) and stdout (read); stderr's tail is kept for errors."""

    def __init__(self, container_id: str, argv: list[str], user: int) -> None:
        self._container = container_id
        self._user = user
        self._group_file = _GROUP_FILES + new_token()
        launch = ["bash", "--noprofile", "--norc", "-c", _LAUNCH, "bash", self._group_file, *argv]
        api = client().api
        with engine_errors("start attached process"):
            exec_id = api.exec_create(
                container_id, launch, stdin=True, user=f"{user}:{user}", workdir=WORKDIR
            )["Id"]
            self._sock = api.exec_start(exec_id, socket=True)
        self._raw: socket.socket = getattr(self._sock, "_sock", self._sock)
        self._frames: Iterator[tuple[int, bytes]] = frames_iter(self._sock, tty=False)
        self.stderr = b""
        self._closed = False

    def read(self) -> bytes:
        """The next bytes of its stdout; b"" once it has ended or was closed. Blocks."""
        try:
            for stream, chunk in self._frames:
                if stream == STDOUT:
                    return chunk
                self.stderr = (self.stderr + chunk)[-STDERR_KEPT:]
        except (OSError, ValueError):  # the socket was closed under the read
            return b""
        return b""

    def write(self, data: bytes) -> None:
        """Send bytes to its stdin; OSError when it is gone."""
        self._raw.sendall(data)

    def close(self) -> None:
        """Kill its process group and hang up; idempotent. A container that is gone is fine."""
        if self._closed:
            return
        self._closed = True
        # Hang up first. While the engine is blocked copying output that nobody reads (a server
        # cut off mid-flood), it does not report the end of another exec in the container, so
        # the kill below would never return.
        with contextlib.suppress(OSError):
            self._raw.shutdown(socket.SHUT_RDWR)
        close_socket(self._sock)
        with contextlib.suppress(SandboxError):  # the sandbox may be gone: nothing left to kill
            capture(self._container, ["bash", "-c", _KILL, "bash", self._group_file], self._user)
