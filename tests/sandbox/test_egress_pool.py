"""Warm spares for jobs with network: an internal network, its proxy and a sandbox on it, made
ahead of the job, handed over, replaced, and reaped when their worker is gone. Real Docker, real
Squid, the stand-in outside hosts of tests/sandbox/standins.py."""

from __future__ import annotations

import subprocess
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.fernet import Fernet

from resolver.agent.sandboxes import (
    claim_sandbox,
    policy_from_settings,
    start_warm_pool,
    stop_warm_pool,
)
from resolver.core.settings import Settings
from sandbox import (
    Allowance,
    EgressPlan,
    SandboxPolicy,
    WarmPool,
    list_sandboxes,
    reap,
    remove_all,
)
from sandbox.naming import SPARE_MAX_AGE
from sandbox.proxy import ROLE_NETWORK, ROLE_PROXY, list_egress
from sandbox.workspace import list_volumes
from tests.sandbox.conftest import DEPLOYMENT, docker_inspect, volume_exists
from tests.sandbox.standins import ALLOWED, DENIED, Outside
from tests.support.procs import wait_until

pytestmark = pytest.mark.docker

ONLY_ALLOWED = EgressPlan(Allowance((ALLOWED,)))
TEN_YEARS = 10 * 365 * 24 * 3600.0


def _curl(host: str) -> str:
    return f"curl -sS -m 20 -o /dev/null -w '%{{http_code}}' http://{host}/hello"


def _exists(kind: str, name: str) -> bool:
    done = subprocess.run(["docker", kind, "inspect", name], capture_output=True, check=False)
    return done.returncode == 0


def test_a_job_with_network_gets_the_warm_spare_and_a_new_one_is_made(
    egress_policy: SandboxPolicy, job_id: str
) -> None:
    pool = WarmPool(egress_policy, 0, ONLY_ALLOWED)
    try:
        wait_until(lambda: pool.ready(networked=True) == 1, 60, "a warm spare")
        with pool.claim(job_id, egress=ONLY_ALLOWED) as box:
            assert box.egress is not None
            # The job's name is taken alongside the first command.
            wait_until(
                lambda: docker_inspect(box.container_id)["Name"].endswith(job_id), 20, "its name"
            )
            assert pool.ready(networked=True) == 0
            assert box.run(_curl(ALLOWED)).output == "200"
            denied = box.run(_curl(DENIED))
            assert denied.output == "403" and denied.blocked == (DENIED,)
            wait_until(lambda: pool.ready(networked=True) == 1, 60, "the spare replaced")
        assert not _exists("container", box.egress.container_id)
        assert not _exists("network", box.egress.network)
        assert not volume_exists(box.volume)
        with pool.claim(job_id + "-plain") as plain:  # no plain warm ones: a cold start
            assert plain.egress is None
    finally:
        pool.close()
    assert pool.ready(networked=True) == 0


def test_a_job_whose_list_differs_gets_the_spares_proxy_reconfigured(
    egress_policy: SandboxPolicy, job_id: str
) -> None:
    pool = WarmPool(egress_policy, 0, ONLY_ALLOWED)
    try:
        wait_until(lambda: pool.ready(networked=True) == 1, 60, "a warm spare")
        with pool.claim(job_id, egress=EgressPlan(Allowance((DENIED,)))) as box:
            assert pool.ready(networked=True) == 0  # the spare it was
            assert box.run(_curl(DENIED)).output == "200"
            assert box.run(_curl(ALLOWED)).output == "403"
    finally:
        pool.close()


def test_a_job_whose_tools_need_other_settings_starts_cold(
    egress_policy: SandboxPolicy, job_id: str
) -> None:
    pool = WarmPool(egress_policy, 0, ONLY_ALLOWED)
    try:
        wait_until(lambda: pool.ready(networked=True) == 1, 60, "a warm spare")
        other = EgressPlan(ONLY_ALLOWED.first, (("PIP_INDEX_URL", f"http://{ALLOWED}/simple"),))
        with pool.claim(job_id, egress=other) as box:
            assert pool.ready(networked=True) == 1  # the spare is still there
            assert box.run("printenv PIP_INDEX_URL").output.strip() == f"http://{ALLOWED}/simple"
    finally:
        pool.close()


def test_a_spare_past_its_lifetime_is_replaced(egress_policy: SandboxPolicy) -> None:
    policy = _own_deployment(egress_policy)
    pool = WarmPool(policy, 0, ONLY_ALLOWED, lifetime=4.0)
    try:
        wait_until(lambda: pool.ready(networked=True) == 1, 60, "a warm spare")
        [first] = _warm(policy.deployment)
        wait_until(lambda: first not in _warm(policy.deployment), 60, "the old spare gone")
        wait_until(lambda: len(_warm(policy.deployment)) == 1, 60, "a new spare")
        assert len(list_egress(policy.deployment, ROLE_NETWORK)) == 1  # the old one's went
    finally:
        pool.close()
        remove_all(policy.deployment)


def test_the_reaper_removes_a_dead_workers_spares_not_a_live_ones(
    egress_policy: SandboxPolicy,
) -> None:
    # A deployment of its own: the sweep below sees every container as old as a dead worker's.
    policy = _own_deployment(egress_policy)
    dead = WarmPool(policy, 1, ONLY_ALLOWED)
    try:
        wait_until(lambda: dead.ready() == dead.ready(networked=True) == 1, 60, "warm ones")
        warm = _warm(policy.deployment)
        assert reap(_never, TEN_YEARS, policy.deployment) == []  # its pool could still be alive
        later = datetime.now(UTC) + timedelta(seconds=SPARE_MAX_AGE + 60)
        assert sorted(reap(_never, TEN_YEARS, policy.deployment, later)) == sorted(warm)
        assert list_sandboxes(policy.deployment) == []
        assert list_egress(policy.deployment, ROLE_PROXY) == []
        assert list_egress(policy.deployment, ROLE_NETWORK) == []
        assert list_volumes(policy.deployment) == []
    finally:
        dead.close()
        remove_all(policy.deployment)


def _own_deployment(policy: SandboxPolicy) -> SandboxPolicy:
    return replace(policy, deployment=f"{DEPLOYMENT}-{uuid.uuid4().hex[:4]}")


def _warm(deployment: str) -> list[str]:
    """The unclaimed warm containers of a deployment."""
    return [info.container_id for info in list_sandboxes(deployment) if info.unclaimed]


def _never(_job: str, _owner: str | None) -> bool:
    return False


def test_a_worker_process_claims_its_jobs_sandboxes_from_its_pool(
    image: str, stand_ins: Outside, proxy_image: str, job_id: str
) -> None:
    deployment = f"{DEPLOYMENT}-{uuid.uuid4().hex[:4]}"
    settings = Settings(
        _env_file=None,
        secret_keys=Fernet.generate_key().decode(),
        sandbox_image=image,
        deployment_id=deployment,
        sandbox_egress="allowlist",
        sandbox_egress_allow=ALLOWED,
        sandbox_egress_uplink=stand_ins.network,
    )
    assert start_warm_pool(settings.model_copy(update={"sandbox_egress": "none"})) is None
    pool = start_warm_pool(settings)
    assert pool is not None
    try:
        wait_until(lambda: pool.ready(networked=True) == 1, 60, "a warm spare")
        [spare] = _warm(deployment)
        policy = policy_from_settings(settings)
        with claim_sandbox(job_id, policy, "attempt-1", ONLY_ALLOWED) as box:
            assert box.container_id == spare
            assert box.run(_curl(ALLOWED)).output == "200"
    finally:
        stop_warm_pool()
        remove_all(deployment)
    assert _warm(deployment) == []
