"""Lifecycle: the context manager, the warm pool and the reaper."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from sandbox import PeriodicReaper, SandboxPolicy, WarmPool, open_sandbox, reap
from sandbox.engine import client
from sandbox.naming import LABEL_CREATED, LABEL_DEPLOYMENT, LABEL_JOB
from sandbox.workspace import ORPHAN_GRACE, PREFIX
from tests.sandbox.conftest import DEPLOYMENT, docker_inspect, volume_exists
from tests.support.procs import wait_until

pytestmark = pytest.mark.docker

TEN_YEARS = 10 * 365 * 24 * 3600.0


def test_context_manager_removes_container_and_workspace_even_on_error(
    policy: SandboxPolicy, job_id: str
) -> None:
    with pytest.raises(RuntimeError), open_sandbox(job_id, policy) as box:
        box.run("echo hi > note")
        raise RuntimeError("the agent crashed")
    assert docker_inspect(box.container_id) == {}
    assert not volume_exists(box.volume)
    box.close()  # idempotent


def test_claimed_container_has_an_empty_workspace_and_the_pool_refills(
    policy: SandboxPolicy, job_id: str
) -> None:
    pool = WarmPool(policy, 1)
    try:
        wait_until(lambda: pool.ready() == 1, 20, "a warm container")
        with pool.claim(job_id) as box:
            assert box.run("ls -A /workspace; pwd").output == "/workspace\n"
            # The job's name is taken alongside the first command.
            wait_until(
                lambda: docker_inspect(box.container_id)["Name"].endswith(job_id), 20, "its name"
            )
            box.write_file("cloned.txt", b"from the host")
            assert box.run("cat cloned.txt").output == "from the host"
            wait_until(lambda: pool.ready() == 1, 20, "a warm container")
        with pool.claim(job_id + "-b") as other:
            assert other.run("ls -A /workspace").output == ""
    finally:
        pool.close()
    assert pool.ready() == 0


def test_an_empty_pool_falls_back_to_a_cold_start(policy: SandboxPolicy, job_id: str) -> None:
    pool = WarmPool(policy, 0)
    with pool.claim(job_id) as box:
        assert box.run("echo cold").output == "cold\n"
    pool.close()


def test_reaper_removes_a_crashed_workers_container(policy: SandboxPolicy, job_id: str) -> None:
    crashed = open_sandbox(job_id, policy)
    running = open_sandbox(job_id + "-live", policy)
    try:
        removed = reap(lambda job, _owner: job == job_id, TEN_YEARS, DEPLOYMENT)
        # Other tests' orphans (a SIGKILLed worker's sandbox) may go in the same sweep.
        assert crashed.container_id in removed and running.container_id not in removed
        assert docker_inspect(crashed.container_id) == {}
        assert docker_inspect(running.container_id)["State"]["Running"]
        assert volume_exists(running.volume)
    finally:
        running.__exit__(None, None, None)
        crashed.__exit__(None, None, None)


def test_the_periodic_reaper_sweeps_on_its_own(policy: SandboxPolicy, job_id: str) -> None:
    crashed = open_sandbox(job_id, policy)
    reaper = PeriodicReaper(lambda job, _owner: job == job_id, TEN_YEARS, 0.2, DEPLOYMENT)
    try:
        wait_until(lambda: docker_inspect(crashed.container_id) == {}, 20, "the sweep")
    finally:
        reaper.stop()
        crashed.__exit__(None, None, None)


def test_reaper_removes_unused_workspace_volumes_only_when_old(job_id: str) -> None:
    now = datetime.now(UTC)
    old, new = _volume(job_id, now - timedelta(seconds=ORPHAN_GRACE + 60)), _volume(job_id, now)
    try:
        reap(lambda _job, _owner: False, TEN_YEARS, DEPLOYMENT)
        assert not volume_exists(old)
        assert volume_exists(new)
    finally:
        client().api.remove_volume(new)


def _volume(job_id: str, created: datetime) -> str:
    name = f"{PREFIX}{job_id}-{created.timestamp():.0f}"
    labels = {
        LABEL_CREATED: created.isoformat(timespec="seconds"),
        LABEL_JOB: job_id,
        LABEL_DEPLOYMENT: DEPLOYMENT,
    }
    client().api.create_volume(name, labels=labels)
    return name


def test_the_reaper_leaves_another_deployments_sandboxes_alone(
    policy: SandboxPolicy, job_id: str
) -> None:
    theirs = open_sandbox(job_id, replace(policy, deployment=f"{DEPLOYMENT}-other"))
    try:
        # Even a job id this deployment calls stale, and a container past the maximum age.
        assert theirs.container_id not in reap(lambda _job, _owner: True, 0, DEPLOYMENT)
        assert docker_inspect(theirs.container_id)["State"]["Running"]
        assert volume_exists(theirs.volume)
    finally:
        theirs.__exit__(None, None, None)


def test_a_sandbox_whose_attempt_lost_the_job_is_reaped(policy: SandboxPolicy, job_id: str) -> None:
    dead_worker = open_sandbox(job_id, policy, owner="attempt-1")
    taken_over = open_sandbox(job_id, policy, owner="attempt-2")
    try:
        removed = reap(lambda _job, owner: owner != "attempt-2", TEN_YEARS, DEPLOYMENT)
        assert dead_worker.container_id in removed
        assert taken_over.container_id not in removed
    finally:
        dead_worker.__exit__(None, None, None)
        taken_over.__exit__(None, None, None)
