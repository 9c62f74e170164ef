"""The sandbox policy the settings describe: the one place settings meet the sandbox library,
which takes its policy as a value and knows nothing of Resolver."""

from __future__ import annotations

from resolver.core.settings import Settings
from sandbox import SandboxPolicy, image_tag


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
        runtime=settings.sandbox_runtime,
    )
