"""Cold start: a fresh workspace volume and a fresh container for one job (or for the warm pool),
and, when the job may reach hosts, its internal network and egress proxy."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Final

from sandbox.container import remove_container, start_container
from sandbox.image import proxy_image_tag
from sandbox.naming import check_job_id, job_name, new_token, pool_name
from sandbox.policy import EgressPlan, SandboxPolicy
from sandbox.proxy import EgressProxy, egress_labels, egress_name, open_proxy, proxy_env
from sandbox.session import Sandbox
from sandbox.workspace import create_volume, remove_volume

# Names a warm spare's proxy and network until a job claims it (they keep the name after).
SPARE: Final = "spare"


@dataclass(frozen=True)
class Started:
    """A started container, its workspace volume and its proxy, if it has one."""

    container_id: str
    volume: str
    proxy: EgressProxy | None


def open_sandbox(
    job_id: str,
    policy: SandboxPolicy,
    owner: str | None = None,
    egress: EgressPlan | None = None,
) -> Sandbox:
    """Create and start a sandbox for `job_id`, with an empty workspace of its own; `owner` is
    the job attempt (lease owner) it belongs to. Without `egress` it has no network at all;
    with it, its only way out is its own proxy."""
    check_job_id(job_id)
    started = start_sandbox(policy, new_token(), job_id, owner, egress)
    return Sandbox(started.container_id, job_id, started.volume, policy, owner, started.proxy)


def start_sandbox(
    policy: SandboxPolicy,
    token: str,
    job_id: str | None,
    owner: str | None,
    egress: EgressPlan | None,
) -> Started:
    """Start a job's container (or, with `job_id` None, a warm one named for the pool) on a new
    workspace, behind a new proxy when there is `egress`. Nothing is left behind on failure."""
    with ExitStack() as undo:
        volume = create_volume(policy, job_id)
        undo.callback(remove_volume, volume)
        proxy = _open_egress(policy, token, job_id, owner, egress) if egress else None
        if proxy is not None:
            undo.callback(proxy.close)
        env = proxy_env(proxy.url, dict(egress.env)) if proxy and egress else None
        network = (proxy.network, proxy.ip) if proxy else None
        name = job_name(token, job_id) if job_id else pool_name(token)
        container_id = start_container(policy, name, volume, job_id, owner, network, env)
        undo.pop_all()
    return Started(container_id, volume, proxy)


def discard(started: Started) -> None:
    """Remove a started container, then its proxy and network, then its workspace."""
    try:
        remove_container(started.container_id)
        if started.proxy is not None:
            started.proxy.close()
    finally:
        remove_volume(started.volume)


def _open_egress(
    policy: SandboxPolicy, token: str, job_id: str | None, owner: str | None, egress: EgressPlan
) -> EgressProxy:
    labels = egress_labels(job_id, policy.deployment, owner)
    image = policy.proxy_image or proxy_image_tag()
    name = egress_name(token, job_id or SPARE)
    return open_proxy(
        image, policy.egress_uplink, name, labels, egress.first, policy.egress_subnets
    )
