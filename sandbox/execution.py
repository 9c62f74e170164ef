"""Processes inside a container, through the engine's API socket rather than the CLI.

`execute` runs one process as its own exec. `Shell` keeps one bash (shell.SERVER) attached for
a session and runs each command through it: a fork in the container instead of an exec's
three round trips to the engine and its runtime's setup, which dominate a short command.
"""

from __future__ import annotations

import contextlib
import secrets
import select
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from docker.utils.socket import frames_iter

from sandbox.engine import (
    SandboxError,
    SandboxLostError,
    SandboxNotFoundError,
    client,
    engine_errors,
)
from sandbox.policy import INIT_USER, WORKDIR
from sandbox.shell import encode_request, server_argv

# An exec's output ends when its last pipe closes, which can be before the engine records the
# exit (or long before, if the process closed its output); the command's timeout bounds the wait.
_FIRST_POLL: Final = 0.001
_LAST_POLL: Final = 0.1
# While a command runs silent, how often the shell checks that its container still runs. A
# container that dies mid-command (gVisor's kernel stopping, the engine killing it) leaves the
# attached socket open with nobody at the other end: without this, the wait has no end.
ALIVE_POLL: Final = 2.0
MID_COMMAND: Final = "the sandbox stopped in the middle of a command"
# The engine can record a container's exit before its OOM kill (gVisor's kernel, killed by the
# host's OOM killer: `die`, then `oom`, 2 in 30 runs under load) and then never sets
# State.OOMKilled, but its event log has the kill. How long a stop that reads as an outside kill
# waits there for one before it counts as lost.
OOM_EVENT_WAIT: Final = 2.0

Frames = Iterator[tuple[int, bytes]]


def execute(
    container_id: str,
    argv: list[str],
    user: int,
    on_output: Callable[[bytes], None],
    workdir: str = WORKDIR,
) -> int:
    """Run `argv`, feed its combined stdout and stderr to `on_output`, return its exit code."""
    api = client().api
    with engine_errors("exec"):
        exec_id = api.exec_create(container_id, argv, user=f"{user}:{user}", workdir=workdir)["Id"]
        sock = api.exec_start(exec_id, socket=True)
        try:
            for _stream, chunk in frames_iter(sock, tty=False):
                on_output(chunk)
        finally:
            close_socket(sock)
        return wait_exit_code(api, exec_id)


def capture(
    container_id: str, argv: list[str], user: int, workdir: str = WORKDIR
) -> tuple[int, bytes]:
    """Run a short helper command and return its exit code and output."""
    chunks: list[bytes] = []
    code = execute(container_id, argv, user, chunks.append, workdir)
    return code, b"".join(chunks)


class ShellDiedError(Exception):
    """The session's shell ended mid-command: killed by the command, or abandoned."""


class Shell:
    """One attached bash that runs a session's commands one at a time (see shell.SERVER)."""

    def __init__(self, container_id: str, user: int) -> None:
        api = client().api
        with engine_errors("start shell"):
            exec_id = api.exec_create(
                container_id, server_argv(), stdin=True, user=f"{user}:{user}", workdir=WORKDIR
            )["Id"]
            self._sock = api.exec_start(exec_id, socket=True)
        self._container_id = container_id
        self._raw: socket.socket = getattr(self._sock, "_sock", self._sock)
        self._frames: Frames = frames_iter(self._sock, tty=False)

    def run(self, argv: list[str], on_output: Callable[[bytes], None]) -> tuple[int, str]:
        """Run `argv`, feed its output, return its exit code and the OOM counter files' text."""
        reply_token = secrets.token_hex(8)
        try:
            request = encode_request(reply_token, argv)
        except ValueError as error:  # what the engine answers for such an exec, too
            on_output(f"{error}\n".encode())
            return 1, ""
        with engine_errors("exec"):
            self._raw.sendall(request)
            return self._read_reply(b"\0" + reply_token.encode() + b" ", on_output)

    def ready(self) -> bool:
        """Whether the shell still runs, dropping what background jobs wrote since the last run:
        output that arrives while no command runs is no command's."""
        try:
            with engine_errors("exec"):
                while readable(self._raw, 0):
                    self._next_chunk()
        except ShellDiedError:
            return False
        return True

    def abandon(self) -> None:
        """Make a waiting `run` raise ShellDiedError now; for a shell that no longer answers."""
        with contextlib.suppress(OSError):  # already closed: nothing waits on it
            self._raw.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Hang up; the shell reads the end of its input and exits. Wakes a waiting `run`."""
        self.abandon()
        close_socket(self._sock)

    def _read_reply(self, marker: bytes, on_output: Callable[[bytes], None]) -> tuple[int, str]:
        # Output is passed on as it comes, but for a tail that could be the start of the marker.
        held = len(marker) - 1
        pending = b""
        while True:
            try:
                pending += self._next_chunk()
            except ShellDiedError:
                on_output(pending)
                raise
            at = pending.find(marker)
            if at >= 0:
                on_output(pending[:at])
                return self._read_status(pending[at + len(marker) :])
            if len(pending) > held:
                on_output(pending[:-held])
                pending = pending[-held:]

    def _read_status(self, data: bytes) -> tuple[int, str]:
        while b"\0" not in data:
            data += self._next_chunk()
        status = data.partition(b"\0")[0].decode(errors="replace")
        code, _, counters = status.partition("\n")
        return int(code), counters

    def _next_chunk(self) -> bytes:
        # Frames are read straight off the socket (no buffer), so a readable socket is the only
        # way the next frame can be there.
        while not readable(self._raw, ALIVE_POLL):
            stopped = container_stopped(self._container_id)
            if stopped is not None:
                raise stopped_mid_command(stopped)
        chunk = next(self._frames, None)
        if chunk is None:
            raise ShellDiedError("the session's shell ended")
        return chunk[1]


def readable(sock: socket.socket, seconds: float) -> bool:
    """Whether `sock` has something to read within `seconds`. With poll, not select: a worker
    running many jobs holds descriptors past select's 1024, which select refuses outright."""
    waiting = select.poll()
    waiting.register(sock, select.POLLIN | select.POLLPRI)
    return bool(waiting.poll(seconds * 1000))


def stopped_mid_command(stopped: Stopped) -> SandboxError:
    return stopped.error(MID_COMMAND)


def shell_gone_with_container(container_id: str, user: int) -> Stopped | None:
    """After the session's shell ended mid-command: why its container stopped, or None when it
    still runs (the command killed the shell). A runtime can end the shell's exec before the
    engine records its container's exit (gVisor's kernel killed as one process), so a container
    that no longer runs a new process is given until ALIVE_POLL for the engine to say why."""
    stopped = container_stopped(container_id)
    if stopped is not None:
        return stopped
    try:
        code, output = capture(container_id, ["true"], user)
    except SandboxError:
        code, output = -1, b""
    if code == 0 and not output:
        return None
    deadline = time.monotonic() + ALIVE_POLL
    while (stopped := container_stopped(container_id)) is None and time.monotonic() < deadline:
        time.sleep(_LAST_POLL)
    return stopped


@dataclass(frozen=True)
class Stopped:
    """Why a container no longer runs, and whether it was `lost` rather than ended by its job.

    A job's commands can end their container one way: its memory limit's OOM killer, which the
    engine records (in State.OOMKilled, or in its event log alone). Its init runs as a user of
    its own (policy.INIT_UID), which they cannot signal. So any other end came from outside (the
    engine's kill, an engine restart, an operator): lost, and the job runs again, up to its
    attempts. An end that reads like a kill (exit 137, no OOM) is the same whoever killed, so a
    container whose init its commands could reach is never lost: the job must not run (and
    pay) again on its commands' say-so."""

    reason: str
    lost: bool

    def error(self, what: str) -> SandboxError:
        kind = SandboxLostError if self.lost else SandboxError
        return kind(f"{what}: {self.reason}")


OUT_OF_MEMORY: Final = Stopped("its container ran out of memory and was killed", lost=False)


def container_stopped(container_id: str) -> Stopped | None:
    """Why the container no longer runs (None while it does); SandboxLostError when the engine
    cannot be reached to say."""
    try:
        with engine_errors("inspect sandbox"):
            found = client().api.inspect_container(container_id)
    except SandboxNotFoundError:
        return Stopped("its container is gone", lost=True)
    state = found["State"]
    if state.get("Running"):
        return None
    if state.get("OOMKilled"):
        return OUT_OF_MEMORY
    exited = f"its container exited with code {state.get('ExitCode')}"
    if (found.get("Config") or {}).get("User") != INIT_USER:
        return Stopped(f"{exited}, and its own commands could have ended it", lost=False)
    if oom_logged(container_id, found["Created"]):
        return OUT_OF_MEMORY
    return Stopped(exited, lost=True)


def oom_logged(container_id: str, created: str) -> bool:
    """Whether the engine's event log has an OOM kill of the container (`created` is its
    creation time, as inspect gives it), waiting OOM_EVENT_WAIT for one to come. A restarted
    engine has forgotten the events before it: those of a container its restart killed."""
    since = int(datetime.fromisoformat(created[:19]).replace(tzinfo=UTC).timestamp())
    wanted = {"type": "container", "container": container_id, "event": "oom"}
    with engine_errors("read sandbox events"):
        events = client().api.events(
            since=since, until=time.time() + OOM_EVENT_WAIT, filters=wanted, decode=True
        )
        try:
            return next(events, None) is not None
        finally:
            events.close()


def close_socket(sock: Any) -> None:
    # Over a unix socket docker-py hands out a SocketIO, whose close() leaves the socket itself
    # open; without closing both, every exec leaks a file descriptor.
    inner = getattr(sock, "_sock", None)
    sock.close()
    if inner is not None:
        inner.close()


def wait_exit_code(api: Any, exec_id: str) -> int:
    pause = _FIRST_POLL
    while (state := api.exec_inspect(exec_id))["Running"]:
        time.sleep(pause)
        pause = min(pause * 2, _LAST_POLL)
    code = state["ExitCode"]
    return int(code) if code is not None else -1
