"""A Sandbox: one container and its workspace volume, driven like a shell session."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, Final

from sandbox import files
from sandbox.attach import Attached
from sandbox.change import Change, ExportLimits
from sandbox.container import remove_container
from sandbox.egress import HostRecord, Window, command_at, record
from sandbox.engine import SandboxError
from sandbox.execution import (
    MID_COMMAND,
    Shell,
    ShellDiedError,
    capture,
    container_stopped,
    shell_gone_with_container,
    stopped_mid_command,
)
from sandbox.export import export_change, is_running, stray_processes
from sandbox.hosts import Allowance
from sandbox.naming import new_token
from sandbox.output import OutputBuffer
from sandbox.policy import ExecResult, SandboxPolicy
from sandbox.proxy import EgressProxy
from sandbox.shell import OOM_COUNTER, command_argv, killer_argv, parse_oom_kills
from sandbox.workspace import remove_volume

log = logging.getLogger(__name__)

# The in-container timeout normally ends a command; past this grace the host kills it instead.
WATCHDOG_GRACE: Final = 5.0
KILLED: Final = 137
# While a run is starting, `interrupt` waits up to 2 s for it to record its process group.
_STARTING_TRIES: Final = 100


@dataclass
class _Run:
    """The command in progress, as `interrupt` and the watchdog see it."""

    token: str
    cancelled: bool = False
    overdue: bool = False
    ended: threading.Event = field(default_factory=threading.Event)


class Sandbox:
    """A running container with the `volume` mounted at /workspace. Use it as a context manager:
    leaving it removes both."""

    def __init__(
        self,
        container_id: str,
        job_id: str,
        volume: str,
        policy: SandboxPolicy,
        owner: str | None = None,
        egress: EgressProxy | None = None,
        shell: Shell | None = None,
        naming: Future[None] | None = None,
    ):
        self.container_id = container_id
        self.job_id = job_id
        self.volume = volume
        self.policy = policy
        self.owner = owner
        self.egress = egress
        self.egress_hosts: dict[str, HostRecord] = {}
        """Every host the proxy saw, with counts and the commands that met a block."""
        self._windows: list[Window] = []
        self._lock = threading.Lock()
        self._current: _Run | None = None
        self._shell = shell
        """The session's shell; a warm sandbox comes with one started."""
        self._naming = naming
        """A warm sandbox's rename to the job's name, which runs alongside its first command."""
        self._oom_kills = 0
        self._closed = False

    def run(
        self,
        command: str,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        label: str | None = None,
    ) -> ExecResult:
        """Run `command` in the session's shell; `env` is exported and, like cwd, persists.
        The egress report names the command by `label` (default: the command itself).

        Background jobs outlive the command; what they print while no command runs is dropped.
        """
        if self.egress is not None:
            self.egress.ready()  # the proxy started alongside the sandbox
        limit = self.policy.command_timeout if timeout is None else timeout
        run = _Run(token=new_token())
        argv = command_argv(run.token, command, limit, cwd, env or {})
        with self._lock:
            output = OutputBuffer(self.policy.output_limit)
            window_start = time.time()
            started = time.monotonic()
            with self._stopped_is_said(MID_COMMAND):
                exit_code, counters = self._execute(run, argv, limit, output)
            duration = time.monotonic() - started
            if exit_code == KILLED or run.cancelled or run.overdue:
                # Whatever killed the run may have spared part of its group (the shell answers
                # once its first process dies), so the rest goes too.
                self._kill(run, tries=1)
            oom_killed = exit_code != 0 and self._new_oom_kill(counters)
            window = Window(window_start, time.time(), label or command)
            blocked = self._read_egress(window)
        timed_out = run.overdue or (exit_code == KILLED and duration >= limit and not run.cancelled)
        return ExecResult(
            exit_code=exit_code,
            output=output.text(),
            duration=duration,
            timed_out=timed_out,
            oom_killed=oom_killed,
            cancelled=run.cancelled,
            blocked=blocked,
        )

    def attach(self, argv: list[str]) -> Attached:
        """Start `argv` in /workspace with its stdin and stdout attached (an MCP server over
        stdio); the caller closes it, and closing the sandbox ends it anyway."""
        if self.egress is not None:
            self.egress.ready()
        return Attached(self.container_id, argv, self.policy.user)

    def allow(self, allowance: Allowance) -> None:
        """Change what the sandbox may reach from now on (between setup and the agent)."""
        if self.egress is not None:
            self.egress.allow(allowance)
        elif not allowance.nothing:
            raise SandboxError("this sandbox was started without egress, so it cannot reach hosts")

    def interrupt(self) -> None:
        """Kill the running command's process group; its `run` returns with cancelled=True."""
        run = self._current
        if run is not None:
            run.cancelled = True
            self._kill(run, _STARTING_TRIES)

    def read_file(self, path: str) -> bytes:
        with self._stopped_is_said():
            return files.read_file(self.container_id, path)

    def write_file(self, path: str, data: bytes) -> None:
        with self._stopped_is_said():
            files.write_file(self.container_id, path, data, self.policy.user)

    def list_dir(self, path: str) -> list[str]:
        with self._stopped_is_said():
            return files.list_dir(self.container_id, path, self.policy.user)

    def load(self, archive: IO[bytes]) -> None:
        """Unpack a tar archive into /workspace (its members' owners are kept)."""
        with self._stopped_is_said():
            files.put_tree(self.container_id, archive)

    def export(self, listing: bytes, limits: ExportLimits) -> Change:
        """Stop the agent, then take its change out as data: what differs in /workspace from the
        base commit that `listing` describes (`git ls-tree -r -z` of it). The sandbox's
        container is gone afterwards; ChangeRejectedError when the change breaks a limit."""
        self._drop_shell()

        def stop_agent() -> int:
            # Only while the agent's container runs is its volume known to be whole.
            unread = "the sandbox stopped before its work could be read"
            if self._closed:
                raise SandboxError(unread)
            if not is_running(self.container_id):
                stopped = container_stopped(self.container_id)
                raise stopped.error(unread) if stopped else SandboxError(unread)
            stray = stray_processes(self.container_id)
            self.close()
            return stray

        return export_change(self, stop_agent, listing, limits)

    def _read_egress(self, window: Window | None) -> tuple[str, ...]:
        """Count the proxy's new log entries; return the hosts blocked during `window`."""
        if self.egress is None:
            return ()
        if window is not None:
            self._windows.append(window)
        entries = self.egress.read_log()
        record(self.egress_hosts, entries, self._windows)
        if window is None:
            return ()
        hosts = (e.host for e in entries if e.blocked and command_at([window], e.time))
        return tuple(dict.fromkeys(hosts))

    def close(self) -> None:
        """Kill and remove the container (the engine waits for it); idempotent. The workspace
        volume stays until __exit__."""
        self._drop_shell()
        if not self._closed:
            self._final_egress_read()
            if self._naming is not None:
                wait([self._naming])  # its failure was logged where it ran
            remove_container(self.container_id)
            self._closed = True
            if self.egress is not None:
                self.egress.close()

    def _final_egress_read(self) -> None:
        # What background processes did after the last command still counts.
        try:
            self._read_egress(None)
        except SandboxError:
            log.warning("sandbox.egress_log_unread", exc_info=True, extra={"id": self.job_id})

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self.close()
        finally:
            remove_volume(self.volume)

    def _execute(
        self, run: _Run, argv: list[str], limit: float, output: OutputBuffer
    ) -> tuple[int, str | None]:
        """The exit code and the OOM counters' text (None when the shell died with the run)."""
        shell = self._ready_shell()
        watchdog = threading.Timer(limit + WATCHDOG_GRACE, self._overdue, args=(run, shell))
        watchdog.daemon = True
        self._current = run
        watchdog.start()
        try:
            return shell.run(argv, output.feed)
        except ShellDiedError:
            # Killed along with the command (`kill -9 -1`, say), or stuck: a new one next time;
            # unless the whole container went with it.
            self._drop_shell()
            stopped = shell_gone_with_container(self.container_id, self.policy.user)
            if stopped is not None:
                raise stopped_mid_command(stopped) from None
            return KILLED, None
        except SandboxError:
            self._drop_shell()
            raise
        finally:
            run.ended.set()
            watchdog.cancel()
            self._current = None

    @contextmanager
    def _stopped_is_said(self, what: str = "the sandbox stopped") -> Iterator[None]:
        """An engine call that failed because the container no longer runs says why it stopped
        (and whether it was lost, see execution.Stopped) rather than what the engine answered:
        a stopped container's workspace is unmounted, so its files read as missing (OSError)."""
        try:
            yield
        except (SandboxError, OSError) as error:
            stopped = container_stopped(self.container_id)
            if stopped is None:
                raise
            raise stopped.error(what) from error

    def _ready_shell(self) -> Shell:
        if self._shell is None or not self._shell.ready():
            self._drop_shell()
            self._shell = Shell(self.container_id, self.policy.user)
        return self._shell

    def _drop_shell(self) -> None:
        if self._shell is not None:
            self._shell.close()
            self._shell = None

    def _overdue(self, run: _Run, shell: Shell) -> None:
        run.overdue = True
        self._kill(run, _STARTING_TRIES)
        # Once the group is dead the shell answers at once, unless it is stuck itself.
        if not run.ended.wait(WATCHDOG_GRACE):
            shell.abandon()

    def _kill(self, run: _Run, tries: int) -> None:
        try:
            capture(self.container_id, killer_argv(run.token, tries), self.policy.user)
        except SandboxError:
            log.warning("sandbox.kill_failed", exc_info=True, extra={"id": self.container_id})

    def _new_oom_kill(self, counters: str | None) -> bool:
        """Whether the memory cgroup's OOM killer struck since the last check."""
        if counters is None:
            try:
                _code, text = capture(
                    self.container_id, ["sh", "-c", OOM_COUNTER], self.policy.user
                )
            except SandboxError:
                stopped = container_stopped(self.container_id)
                if stopped is None:
                    raise
                raise stopped_mid_command(stopped) from None
            counters = text.decode(errors="replace")
        count = parse_oom_kills(counters)
        struck, self._oom_kills = count > self._oom_kills, count
        return struck
