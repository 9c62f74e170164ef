"""One process inside a container, through the engine's API socket rather than the CLI."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from docker.utils.socket import frames_iter

from sandbox.engine import client, engine_errors
from sandbox.policy import WORKDIR

# An exec's output ends when its last pipe closes, which can be before the engine records the
# exit (or long before, if the process closed its output); the command's timeout bounds the wait.
_FIRST_POLL: Final = 0.001
_LAST_POLL: Final = 0.1


def execute(
    container_id: str, argv: list[str], user: int, on_output: Callable[[bytes], None]
) -> int:
    """Run `argv`, feed its combined stdout and stderr to `on_output`, return its exit code."""
    api = client().api
    with engine_errors("exec"):
        exec_id = api.exec_create(container_id, argv, user=f"{user}:{user}", workdir=WORKDIR)["Id"]
        sock = api.exec_start(exec_id, socket=True)
        try:
            for _stream, chunk in frames_iter(sock, tty=False):
                on_output(chunk)
        finally:
            _close(sock)
        return _exit_code(api, exec_id)


def capture(container_id: str, argv: list[str], user: int) -> tuple[int, bytes]:
    """Run a short helper command and return its exit code and output."""
    chunks: list[bytes] = []
    code = execute(container_id, argv, user, chunks.append)
    return code, b"".join(chunks)


def _close(sock: Any) -> None:
    # Over a unix socket docker-py hands out a SocketIO, whose close() leaves the socket itself
    # open; without closing both, every exec leaks a file descriptor.
    inner = getattr(sock, "_sock", None)
    sock.close()
    if inner is not None:
        inner.close()


def _exit_code(api: Any, exec_id: str) -> int:
    pause = _FIRST_POLL
    while (state := api.exec_inspect(exec_id))["Running"]:
        time.sleep(pause)
        pause = min(pause * 2, _LAST_POLL)
    code = state["ExitCode"]
    return int(code) if code is not None else -1
