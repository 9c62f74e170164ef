"""Lifecycle: the context manager, the warm pool and the reaper."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandbox import PeriodicReaper, SandboxPolicy, WarmPool, open_sandbox, reap
from tests.sandbox.conftest import docker_inspect

pytestmark = pytest.mark.docker

TEN_YEARS = 10 * 365 * 24 * 3600.0


def test_context_manager_removes_container_and_workspace_even_on_error(
    policy: SandboxPolicy, workspace_root: Path, job_id: str
) -> None:
    with (
        pytest.raises(RuntimeError),
        open_sandbox(job_id, policy, workspace_root=workspace_root) as box,
    ):
        box.run("echo hi > note")
        raise RuntimeError("the agent crashed")
    assert docker_inspect(box.container_id) == {}
    assert not box.workspace.exists()
    box.close()  # idempotent


def test_claimed_container_has_an_empty_workspace_and_the_pool_refills(
    policy: SandboxPolicy, workspace_root: Path, job_id: str
) -> None:
    pool = WarmPool(policy, 1, workspace_root)
    try:
        _wait_for(lambda: pool.ready() == 1)
        with pool.claim(job_id) as box:
            assert list(box.workspace.iterdir()) == []
            assert box.run("ls -A /workspace; pwd").output == "/workspace\n"
            assert docker_inspect(box.container_id)["Name"].endswith(job_id)
            (box.workspace / "cloned.txt").write_text("from the host")
            assert box.run("cat cloned.txt").output == "from the host"
            _wait_for(lambda: pool.ready() == 1)
        with pool.claim(job_id + "-b") as other:
            assert list(other.workspace.iterdir()) == []
    finally:
        pool.close()
    assert pool.ready() == 0


def test_an_empty_pool_falls_back_to_a_cold_start(
    policy: SandboxPolicy, workspace_root: Path, job_id: str
) -> None:
    pool = WarmPool(policy, 0, workspace_root)
    with pool.claim(job_id) as box:
        assert box.run("echo cold").output == "cold\n"
    pool.close()


def test_reaper_removes_a_crashed_workers_container_and_its_workspace(
    policy: SandboxPolicy, workspace_root: Path, job_id: str
) -> None:
    crashed = open_sandbox(job_id, policy, workspace_root=workspace_root)
    running = open_sandbox(job_id + "-live", policy, workspace_root=workspace_root)
    try:
        removed = reap(lambda job: job == job_id, TEN_YEARS, workspace_root=workspace_root)
        # Other tests' orphans (a SIGKILLed worker's sandbox) may go in the same sweep.
        assert crashed.container_id in removed and running.container_id not in removed
        assert docker_inspect(crashed.container_id) == {}
        assert not crashed.workspace.exists()
        assert docker_inspect(running.container_id)["State"]["Running"]
    finally:
        running.__exit__(None, None, None)
        crashed.__exit__(None, None, None)


def test_the_periodic_reaper_sweeps_on_its_own(
    policy: SandboxPolicy, workspace_root: Path, job_id: str
) -> None:
    crashed = open_sandbox(job_id, policy, workspace_root=workspace_root)
    reaper = PeriodicReaper(lambda job: job == job_id, TEN_YEARS, 0.2, workspace_root)
    try:
        _wait_for(lambda: docker_inspect(crashed.container_id) == {})
        assert not crashed.workspace.exists()
    finally:
        reaper.stop()
        crashed.__exit__(None, None, None)


def test_reaper_removes_orphaned_workspaces_only_when_old(workspace_root: Path) -> None:
    old, new = workspace_root / "ws-orphan-old", workspace_root / "ws-orphan-new"
    old.mkdir()
    new.mkdir()
    ancient = time.time() - 2 * TEN_YEARS
    os.utime(old, (ancient, ancient))
    reap(lambda _job: False, TEN_YEARS, workspace_root=workspace_root)
    assert not old.exists()
    assert new.exists()
    new.rmdir()


def _wait_for(condition: object, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
