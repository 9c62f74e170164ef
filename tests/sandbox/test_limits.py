"""Limits: a fork bomb, a memory hog and an infinite loop each end cleanly, leaving nothing."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from sandbox import Sandbox, SandboxError, SandboxLostError, SandboxPolicy
from sandbox import session as sandbox_session
from sandbox.execution import capture
from sandbox.session import WATCHDOG_GRACE
from tests.sandbox.conftest import RUNTIME, leftovers

pytestmark = pytest.mark.docker


def test_fork_bomb_is_held_by_the_pids_limit(
    open_box: Callable[[SandboxPolicy], Sandbox], policy: SandboxPolicy
) -> None:
    # A low limit, reached within the timeout even where forks are slow (gVisor, a loaded host).
    box = open_box(replace(policy, pids=16))
    # The loop keeps the bomb going until the timeout, which must end it all.
    result = box.run("bomb() { bomb | bomb & }; while :; do bomb; done", timeout=5)
    assert result.timed_out
    assert "Resource temporarily unavailable" in result.output
    if RUNTIME == "runsc":  # gVisor's kernel counts the processes (sandbox.runtime)
        assert box.run("ulimit -u").output.strip() == "16"
    else:
        assert box.run("cat /sys/fs/cgroup/pids/pids.max").output.strip() == "16"
    assert leftovers(box) == []
    assert box.run("echo still usable").output == "still usable\n"
    # The host still forks as usual.
    assert subprocess.run(["true"], check=False, timeout=5).returncode == 0


@pytest.mark.skipif(RUNTIME == "runsc", reason="gVisor's kernel is one process: see below")
def test_memory_hog_ends_as_out_of_memory(box: Sandbox) -> None:
    result = box.run("python3 -c 'x = bytearray(1024 * 1024 * 1024); print(len(x))'", timeout=60)
    assert result.oom_killed
    assert result.exit_code == 137
    assert not result.timed_out
    assert not result.ok
    assert box.run("echo fine").output == "fine\n"
    assert not box.run("false").oom_killed, "one OOM kill is reported once"


@pytest.mark.skipif(RUNTIME != "runsc", reason="runc's OOM killer takes the process alone")
def test_memory_hog_under_gvisor_stops_the_sandbox_with_a_clear_error(box: Sandbox) -> None:
    """Under runsc the host's OOM killer sees one process, gVisor's kernel, and kills it: the
    sandbox ends, and the command says so at once rather than waiting for a reply."""
    started = time.monotonic()
    with pytest.raises(SandboxError, match="stopped in the middle of a command: its container") as (
        stopped
    ):
        box.run("python3 -c 'x = bytearray(1024 * 1024 * 1024); print(len(x))'", timeout=60)
    assert time.monotonic() - started < 30
    assert not isinstance(stopped.value, SandboxLostError), "the job's own doing: not retried"


def test_a_sandbox_killed_mid_command_ends_the_command_with_an_error(box: Sandbox) -> None:
    """The engine (or a dying kernel) ends the container while a command waits silently: the
    command fails at once with the reason, long before its own timeout, and says it was lost
    (no OOM kill: not the job's doing), so the job runs again."""
    killer = threading.Timer(1.0, subprocess.run, args=(["docker", "kill", box.container_id],))
    killer.start()
    started = time.monotonic()
    try:
        with pytest.raises(SandboxLostError, match="middle of a command: its container exited"):
            box.run("sleep 120", timeout=120)
    finally:
        killer.join()
    assert time.monotonic() - started < 15


def test_infinite_loop_is_killed_at_its_timeout_with_nothing_left(box: Sandbox) -> None:
    """The command's own timeout ends it, in the container: never before, and before the host's
    watchdog would (at the timeout plus WATCHDOG_GRACE), which a loaded host cannot bend; what
    the command costs to start and to kill on a busy host (under gVisor, seconds) is no bound."""
    started = time.monotonic()
    result = box.run("sleep 1000 & (while :; do :; done) & while :; do :; done", timeout=2)
    assert result.timed_out
    assert result.output == ""
    assert result.exit_code == 137
    assert 2 <= result.duration < 2 + WATCHDOG_GRACE
    assert time.monotonic() - started < 2 + WATCHDOG_GRACE
    assert leftovers(box) == []


def _interrupt_once_running(box: Sandbox, command: str, ended: threading.Event) -> list[float]:
    """Interrupts the box once `command` runs in it, as a process of its own sees (a fixed delay
    could come before the command starts on a loaded host); the list gets the moment."""
    interrupted: list[float] = []

    def wait() -> None:
        while not ended.is_set():
            _code, found = capture(box.container_id, ["ps", "-eo", "args="], box.policy.user)
            if command.encode() in found.splitlines():
                interrupted.append(time.monotonic())
                box.interrupt()
                return

    threading.Thread(target=wait, daemon=True).start()
    return interrupted


def test_interrupt_cancels_the_running_command(box: Sandbox) -> None:
    ended = threading.Event()
    interrupted = _interrupt_once_running(box, "sleep 1000", ended)
    result = box.run("sleep 1000 & sleep 1000", timeout=60)
    ended.set()
    assert interrupted, "the command ended before it was seen running"
    assert result.cancelled
    assert result.output == ""
    assert not result.timed_out
    assert time.monotonic() - interrupted[0] < 5
    assert leftovers(box) == []


def test_interrupt_without_a_running_command_is_harmless(box: Sandbox) -> None:
    box.interrupt()
    assert box.run("echo ok").output == "ok\n"


def test_a_command_that_kills_its_own_timeout_still_leaves_nothing(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host's watchdog ends it instead: at the timeout plus the grace (turned down here) it
    kills the group (an exec: 2 s allowed), and the reply comes, or the shell is given up, within
    the grace again."""
    monkeypatch.setattr(sandbox_session, "WATCHDOG_GRACE", 1.0)
    result = box.run("kill -KILL $PPID; sleep 1000", timeout=1)
    assert result.timed_out
    assert result.duration < 1 + 1.0 + 2 + 1.0
    assert leftovers(box) == []


def test_a_shell_that_stops_answering_is_given_up_after_the_watchdog(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_session, "WATCHDOG_GRACE", 0.5)
    command = "read -r _ _ _ shell _ < /proc/$PPID/stat; kill -STOP $shell; sleep 30"
    result = box.run(command, timeout=1)
    assert result.timed_out
    assert result.duration < 1 + 0.5 + 2 + 0.5 + 1
    assert box.run("echo fine").output == "fine\n"
