"""Fixtures for the sandbox suite: one image, and a leak check of containers and volumes.

These tests need the Docker engine; when it is unreachable they fail, never skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from sandbox import (
    Sandbox,
    SandboxPolicy,
    ensure_image,
    ensure_proxy_image,
    list_sandboxes,
    open_sandbox,
)
from sandbox.engine import client
from sandbox.naming import LABEL_DEPLOYMENT, LABEL_JOB
from sandbox.workspace import list_volumes
from tests.sandbox.standins import Outside, outside

# Every job id of this run starts with this, so the suite checks only what it created itself;
# its sandboxes are a deployment of their own, so its reaper tests touch nothing else.
RUN_PREFIX = f"t{uuid.uuid4().hex[:8]}"
DEPLOYMENT = f"test-{RUN_PREFIX}"
# The CI runs this suite once per runtime (scripts/test's runsc group sets it to runsc).
RUNTIME: Any = os.environ.get("RESOLVER_SANDBOX_RUNTIME", "runc")


@pytest.fixture(scope="session")
def image() -> str:
    """The sandbox image, built once (offline: no registry is needed)."""
    return ensure_image(offline=True)


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    """At the end of the run, no container or workspace volume of this run is left."""
    yield
    leaked = [info.name for info in list_sandboxes() if RUN_PREFIX in info.name]
    assert leaked == [], f"containers left behind: {leaked}"
    volumes = [
        volume["Name"]
        for volume in list_volumes()
        if RUN_PREFIX in (volume.get("Labels") or {}).get(LABEL_JOB, "")
    ]
    assert volumes == [], f"workspace volumes left behind: {volumes}"


@pytest.fixture
def policy(image: str) -> SandboxPolicy:
    """Small limits, so that the limit tests are quick and the host is never at risk."""
    return SandboxPolicy(
        image=image,
        memory="256m",
        workspace_size="64m",
        pids=128,
        cpus=1.0,
        output_limit=2000,
        deployment=DEPLOYMENT,
        runtime=RUNTIME,
    )


@pytest.fixture
def job_id() -> str:
    return f"{RUN_PREFIX}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def open_box(job_id: str) -> Iterator[Callable[[SandboxPolicy], Sandbox]]:
    """Opens sandboxes under the test's policy and removes them, whatever the test did."""
    opened: list[Sandbox] = []

    def opener(policy: SandboxPolicy) -> Sandbox:
        box = open_sandbox(job_id, policy)
        opened.append(box)
        return box

    yield opener
    for box in opened:
        box.__exit__(None, None, None)


@pytest.fixture
def box(open_box: Callable[[SandboxPolicy], Sandbox], policy: SandboxPolicy) -> Sandbox:
    return open_box(policy)


@pytest.fixture(scope="module")
def stand_ins(image: str) -> Iterator[Outside]:
    """The egress tests' outside hosts, on a network of their own (the proxies' uplink)."""
    with outside(
        image, f"resolver-egress-test-{RUN_PREFIX}", {LABEL_DEPLOYMENT: DEPLOYMENT}
    ) as out:
        yield out


@pytest.fixture(scope="module")
def proxy_image() -> str:
    return ensure_proxy_image(offline=True)


@pytest.fixture
def egress_policy(policy: SandboxPolicy, stand_ins: Outside, proxy_image: str) -> SandboxPolicy:
    return replace(policy, proxy_image=proxy_image, egress_uplink=stand_ins.network)


def docker_inspect(container_id: str) -> dict[str, Any]:
    """What `docker inspect` shows; empty when the container does not exist."""
    done = subprocess.run(
        ["docker", "inspect", container_id], capture_output=True, text=True, check=False
    )
    return json.loads(done.stdout)[0] if done.returncode == 0 else {}


# Every process but this listing's group and the session's shell (its group leader's parent).
_LISTING = """
read -r _ _ _ _ g _ < /proc/$$/stat; read -r _ _ _ s _ < /proc/$g/stat
ps -eo pid=,pgid=,ppid=,args= | cut -c1-200 | awk -v g="$g" -v s="$s" '$2 != g && $1 != s'
"""


def leftovers(box: Sandbox) -> list[str]:
    """Processes in the sandbox other than pid 1, its `sleep infinity`, the session's shell and
    this very listing."""
    rows = [line.split(None, 3) for line in box.run(_LISTING).output.splitlines()]
    return [
        args
        for pid, _pgid, ppid, args in rows
        if pid != "1" and not (ppid == "1" and args == "sleep infinity")
    ]


def volume_exists(name: str) -> bool:
    return any(volume["Name"] == name for volume in client().api.volumes()["Volumes"] or [])
