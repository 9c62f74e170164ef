"""The sandbox policy the settings describe: the one place settings meet the sandbox library,
which takes its policy as a value and knows nothing of Resolver. And this process's warm pool,
which a worker that runs jobs starts once (`start_warm_pool`) and every job claims from."""

from __future__ import annotations

import atexit

from resolver.agent.egress import operator_maximum
from resolver.core.settings import Settings
from sandbox import EgressPlan, Sandbox, SandboxPolicy, WarmPool, image_tag, open_sandbox

_warm: list[tuple[SandboxPolicy, WarmPool]] = []
"""This process's pool, with the policy it was started for (none until a worker starts it)."""


def policy_from_settings(settings: Settings) -> SandboxPolicy:
    """The policy of `settings`; the image defaults to the tag built from sandbox/."""
    return SandboxPolicy(
        image=settings.sandbox_image or image_tag(),
        # A job's sandbox reaches out only through its proxy (agent/egress.py): the deprecated
        # RESOLVER_SANDBOX_NETWORK=bridge means egress `open` there, never a direct bridge.
        network="none",
        memory=settings.sandbox_memory,
        workspace_size=settings.sandbox_workspace_size,
        deployment=settings.deployment,
        pids=settings.sandbox_pids,
        cpus=settings.sandbox_cpus,
        output_limit=settings.sandbox_output_limit,
        command_timeout=float(settings.sandbox_command_timeout),
        egress_uplink=settings.sandbox_egress_uplink,
        egress_subnets=settings.sandbox_egress_subnets,
        runtime=settings.sandbox_runtime,
    )


def start_warm_pool(settings: Settings) -> WarmPool | None:
    """Keep this process's warm sandboxes: RESOLVER_SANDBOX_POOL_SIZE of them without network,
    and RESOLVER_SANDBOX_EGRESS_SPARES behind proxies of their own, set up for the operator's
    maximum (a job's list within it is applied to the proxy in place). They go at exit."""
    maximum, env = operator_maximum(settings)
    spares = 0 if maximum.nothing else settings.sandbox_egress_spares
    if _warm or not (settings.sandbox_pool_size or spares):
        return None
    policy = policy_from_settings(settings)
    pool = WarmPool(policy, settings.sandbox_pool_size, EgressPlan(maximum, env), spares)
    _warm.append((policy, pool))
    atexit.register(stop_warm_pool)
    return pool


def stop_warm_pool() -> None:
    """Remove this process's warm sandboxes and stop making more."""
    while _warm:
        _warm.pop()[1].close()


def claim_sandbox(
    job_id: str, policy: SandboxPolicy, owner: str | None, egress: EgressPlan | None
) -> Sandbox:
    """A started sandbox for the job: from this process's warm pool when it was started for
    this policy, else a cold start."""
    for started_for, pool in _warm:
        if started_for == policy:
            return pool.claim(job_id, owner, egress)
    return open_sandbox(job_id, policy, owner, egress)
