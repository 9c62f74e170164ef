"""A sandbox that goes away under its job (removed, killed from outside) says it was lost, so
the job can run again in a fresh one; one its own commands tried to end is not; and a warm spare
that died is never handed out."""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from sandbox import (
    Sandbox,
    SandboxError,
    SandboxLostError,
    SandboxPolicy,
    WarmPool,
    list_sandboxes,
)
from sandbox.execution import container_stopped, oom_logged
from sandbox.naming import build_labels
from tests.sandbox.conftest import DEPLOYMENT, docker_inspect
from tests.support.procs import wait_until

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


@pytest.mark.parametrize(
    "command",
    ["kill -9 -1", "kill -KILL 1", "kill -TERM 1", "kill -KILL $(pgrep -x sleep)", "kill -9 -1 1"],
)
def test_commands_that_kill_all_they_can_leave_their_sandbox_running(
    box: Sandbox, command: str
) -> None:
    """A hostile agent's way to make its job run (and pay) again: end its own sandbox so that it
    reads as lost. Its init and main process are out of its reach, so its command fails like any
    other, the agent sees it, and the sandbox goes on."""
    assert box.run("echo kept > note").ok
    result = box.run(command)
    assert not result.ok
    if command != "kill -9 -1":
        assert "Operation not permitted" in result.output
    assert docker_inspect(box.container_id)["State"]["Running"]
    assert box.run("cat note").output == "kept\n"


def test_a_sandbox_whose_init_its_commands_could_reach_is_not_lost_when_it_ends(
    image: str, job_id: str
) -> None:
    """An end that reads like the engine's kill (exit 137, no OOM) is no proof of one: where the
    commands could have ended the container themselves, it is not lost (fails closed)."""
    labels = build_labels(job_id, "", datetime.now(UTC), DEPLOYMENT)
    flags = [f"--label={key}={value}" for key, value in labels.items()]
    created = subprocess.run(
        ["docker", "run", "-d", f"--name={job_id}-reachable", "--user=1000:1000", *flags, image],
        check=True,
        capture_output=True,
        text=True,
    )
    container_id = created.stdout.strip()
    try:
        subprocess.run(["docker", "exec", container_id, "kill", "-9", "-1"], check=False)
        wait_until(lambda: not docker_inspect(container_id)["State"]["Running"], 20, "its end")
        stopped = container_stopped(container_id)
        assert stopped is not None
        assert not stopped.lost
        assert stopped.reason == (
            "its container exited with code 137, and its own commands could have ended it"
        )
    finally:
        docker("rm", "-f", container_id)


def test_the_engines_event_log_tells_an_out_of_memory_kill(box: Sandbox) -> None:
    """Where the engine saw the container's exit before its OOM kill (gVisor's kernel killed by
    the host's OOM killer, now and then), only its event log says that the job's commands ended
    it: execution.container_stopped reads it there rather than count the sandbox lost."""
    created = docker_inspect(box.container_id)["Created"]
    assert not oom_logged(box.container_id, created)
    with contextlib.suppress(SandboxError):  # under gVisor, the sandbox ends (test_limits)
        box.run("python3 -c 'x = bytearray(1024 * 1024 * 1024)'", timeout=60)
    assert oom_logged(box.container_id, created)


def spares() -> list[str]:
    return [info.container_id for info in list_sandboxes(DEPLOYMENT) if info.unclaimed]


@pytest.mark.parametrize("how", ["rm", "kill"])
def test_a_dead_spare_is_dropped_and_the_job_gets_a_live_sandbox(
    policy: SandboxPolicy, job_id: str, how: str
) -> None:
    """An engine restart, a prune or an operator kills spares the pool cannot see die: the claim
    finds out (one inspect), drops the dead one and starts the job in a live sandbox."""
    pool = WarmPool(policy, 1)
    try:
        wait_until(lambda: pool.ready() == 1, 30, "a warm container")
        [dead] = spares()
        docker(*(["rm", "-f"] if how == "rm" else ["kill"]), dead)
        with pool.claim(job_id) as box:
            assert box.container_id != dead
            assert box.run("echo alive").output == "alive\n"
        wait_until(lambda: docker_inspect(dead) == {}, 20, "the dead spare to be removed")
    finally:
        pool.close()
