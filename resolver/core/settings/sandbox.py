"""The service's sandbox settings: image, egress, runtime, limits, the reaper and changes."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator


class SandboxFields(BaseModel):
    """The sandbox."""

    sandbox_image: str | None = Field(
        default=None, description="Sandbox image; default is the tag built from sandbox/."
    )
    sandbox_network: Literal["none", "bridge"] = Field(
        default="none",
        description="Deprecated: `bridge` means RESOLVER_SANDBOX_EGRESS=open when that is unset "
        "(through the job's proxy, no longer a direct bridge).",
    )
    sandbox_egress: Literal["none", "registries", "allowlist", "open"] | None = Field(
        default=None,
        description="The most a job's sandbox may reach, through a proxy of its own: none, the "
        "package registries this host uses (pip, npm, apt), the allowlist, or any public host. "
        "Default: none.",
    )
    sandbox_egress_allow: str = Field(
        default="",
        description="Domains for `allowlist` (comma- or space-separated; each covers its "
        "subdomains), reached on ports 80 (HTTP) and 443 (HTTPS); `domain:port` adds a port.",
    )
    sandbox_egress_uplink: str = Field(
        default="bridge", description="Docker network through which a job's proxy reaches out."
    )
    sandbox_egress_subnets: str = Field(
        default="198.18.0.0/15",
        description="IPv4 range of the jobs' internal networks (a /28 each, so a /15 holds "
        "8,192; Docker's own pools hold about 30). Pick one that no host a job reaches is in; "
        "the default is reserved for network benchmarks (RFC 2544).",
    )
    sandbox_runtime: Literal["runc", "runsc", "auto"] = Field(
        default="runc",
        description="The sandbox's OCI runtime: runc (the host's kernel), runsc (gVisor, a "
        "kernel of its own; the engine must have it, see Security model) or auto (runsc where "
        "the engine has it).",
    )
    sandbox_memory: str = Field(default="2g", description="Memory limit of a sandbox.")
    sandbox_pids: int = Field(default=512, ge=16, description="Process limit of a sandbox.")
    sandbox_cpus: float = Field(default=2.0, gt=0, description="CPU limit of a sandbox.")
    sandbox_pool_size: int = Field(
        default=0, ge=0, description="Warm containers kept ready; 0 turns the pool off."
    )
    sandbox_egress_spares: int = Field(
        default=1,
        ge=0,
        description="Warm spares each worker keeps for jobs with network (an internal network, "
        "its proxy and a sandbox on it), when RESOLVER_SANDBOX_EGRESS is not none; 0: none.",
    )
    retention_days: int | None = Field(
        default=None,
        ge=1,
        description="Prune the trajectories (commands, outputs, diffs) of finished jobs older "
        "than this many days; the job rows, outcomes, costs and links stay. Unset: keep all.",
    )
    sandbox_max_age: int = Field(
        default=7200, ge=60, description="Seconds after which the reaper removes a sandbox."
    )
    sandbox_reap_interval: int = Field(
        default=60,
        ge=5,
        description="Seconds between reaper sweeps; a dead worker's sandbox goes within one "
        "sweep of its job's lease running out.",
    )
    deployment_id: str | None = Field(
        default=None,
        description="Marks this deployment's sandboxes, so its reaper touches no others on a "
        "shared engine; default: derived from the database URL.",
    )
    sandbox_output_limit: int = Field(
        default=30_000, ge=1000, description="Characters of command output kept per call."
    )
    sandbox_workspace_root: Path = Field(
        default=Path("~/.local/state/resolver/clones"),
        description="Private host directory (mode 700) for the jobs' own clones; no sandbox "
        "mounts it. Keep it away from .env and the database.",
    )
    sandbox_workspace_size: str = Field(
        default="2g", description="Size cap of a sandbox's /workspace (tmpfs, counted as memory)."
    )
    sandbox_change_max_files: int = Field(
        default=1000, ge=1, description="Most files one change may add, change or delete."
    )
    sandbox_change_max_file_bytes: int = Field(
        default=10 * 2**20, ge=1, description="Largest file a change may hold, in bytes."
    )
    sandbox_change_max_bytes: int = Field(
        default=50 * 2**20, ge=1, description="Largest change in all, in bytes."
    )
    sandbox_setup_timeout: int = Field(
        default=600, ge=1, description="Timeout of a repository's .resolver/setup.sh."
    )
    sandbox_command_timeout: int = Field(
        default=300, ge=1, description="Default timeout of one agent command."
    )

    @field_validator("sandbox_egress_subnets")
    @classmethod
    def _egress_subnets(cls, value: str) -> str:
        try:
            network = ipaddress.IPv4Network(value.strip())
        except ValueError as error:
            raise ValueError(f"an IPv4 range such as 198.18.0.0/15 ({error})") from None
        if network.prefixlen > 28:
            raise ValueError("must hold at least one /28 (a prefix of 28 or less)")
        return str(network)
