"""A sandbox that goes away under its job (removed, killed from outside) says it was lost, so
the job can run again in a fresh one."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable

import pytest

from sandbox import Sandbox, SandboxLostError, SandboxPolicy

pytestmark = pytest.mark.docker


def docker(*argv: str) -> None:
    subprocess.run(["docker", *argv], check=True, capture_output=True)


def test_a_sandbox_removed_mid_command_is_lost(box: Sandbox) -> None:
    remover = threading.Timer(1.0, docker, args=("rm", "-f", box.container_id))
    remover.start()
    try:
        # Gone, or caught on its way out (killed, not yet removed): lost either way.
        with pytest.raises(SandboxLostError, match=r"a command: its container (is gone|exited)"):
            box.run("sleep 120", timeout=120)
    finally:
        remover.join()


def test_a_sandbox_killed_between_commands_is_lost_at_the_next_one(box: Sandbox) -> None:
    assert box.run("echo hi > note").ok
    docker("kill", box.container_id)
    with pytest.raises(SandboxLostError, match="its container exited with code 137"):
        box.run("cat note")
    with pytest.raises(SandboxLostError, match="the sandbox stopped: its container exited"):
        box.read_file("note")


def test_a_sandbox_whose_commands_run_out_of_memory_is_not_lost(
    open_box: Callable[[SandboxPolicy], Sandbox], policy: SandboxPolicy
) -> None:
    """An OOM kill is the job's doing: it ends as a result (runc) or a plain SandboxError (gVisor,
    see test_limits), never as lost, which would run the job again."""
    box = open_box(policy)
    try:
        result = box.run("python3 -c 'x = bytearray(1024 * 1024 * 1024)'", timeout=60)
    except SandboxLostError:
        pytest.fail("an OOM kill counted as lost")
    except Exception as error:
        assert "ran out of memory" in str(error)
    else:
        assert result.oom_killed
