"""Cold start: a fresh workspace volume and a fresh container for one job, and, when the job
may reach hosts, its internal network and egress proxy."""

from __future__ import annotations

from contextlib import ExitStack

from sandbox.container import start_container
from sandbox.image import proxy_image_tag
from sandbox.naming import check_job_id, job_name, new_token
from sandbox.policy import EgressPlan, SandboxPolicy
from sandbox.proxy import EgressProxy, egress_labels, egress_name, open_proxy, proxy_env
from sandbox.session import Sandbox
from sandbox.workspace import create_volume, remove_volume


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
    token = new_token()
    with ExitStack() as undo:
        volume = create_volume(policy, job_id)
        undo.callback(remove_volume, volume)
        proxy = _open_egress(policy, token, job_id, owner, egress) if egress else None
        if proxy is not None:
            undo.callback(proxy.close)
        env = proxy_env(proxy.url, dict(egress.env)) if proxy and egress else None
        network = proxy.network if proxy else None
        name = job_name(token, job_id)
        container_id = start_container(policy, name, volume, job_id, owner, network, env)
        undo.pop_all()
    return Sandbox(container_id, job_id, volume, policy, owner, proxy)


def _open_egress(
    policy: SandboxPolicy, token: str, job_id: str, owner: str | None, egress: EgressPlan
) -> EgressProxy:
    labels = egress_labels(job_id, policy.deployment, owner)
    image = policy.proxy_image or proxy_image_tag()
    name = egress_name(token, job_id)
    return open_proxy(image, policy.egress_uplink, name, labels, egress.first)
