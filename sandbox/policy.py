"""What a sandbox may do and what it gets back: plain values, no engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from sandbox.hosts import Allowance
from sandbox.runtime import Wanted

Network = Literal["none", "bridge"]

AGENT_UID: Final = 1000
# The container's init (tini) and its main process run as a user of their own, never the
# agent's: holding no capability, the agent's commands cannot signal a process of another user,
# so they cannot end their container (`kill -9 -1` ends their own processes, no more).
INIT_UID: Final = 65534
INIT_USER: Final = f"{INIT_UID}:{INIT_UID}"
WORKDIR: Final = "/workspace"
HOME: Final = "/home/agent"
# Inside the container: a private tmpfs, not the host's /tmp.
TMP: Final = "/tmp"  # noqa: S108


@dataclass(frozen=True)
class SandboxPolicy:
    """The container policy; every default is the locked-down one."""

    image: str
    network: Network = "none"
    memory: str = "2g"
    pids: int = 512
    cpus: float = 2.0
    output_limit: int = 30_000
    command_timeout: float = 300.0
    tmp_size: str = "1g"
    home_size: str = "1g"
    workspace_size: str = "2g"
    """The cap on /workspace (a tmpfs volume; the container's memory limit grows by as much)."""
    user: int = AGENT_UID
    read_only: bool = True
    deployment: str = ""
    """Labels every container and volume, so a reaper touches only its own deployment's."""
    proxy_image: str = ""
    """The egress proxy's image; default: the tag built from Dockerfile.proxy."""
    egress_uplink: str = "bridge"
    """The network through which a job's egress proxy reaches out."""
    egress_subnets: str = "198.18.0.0/15"
    """The addresses of the jobs' internal networks, a /28 each (see sandbox/proxy.py)."""
    runtime: Wanted = "runc"
    """The OCI runtime: runc, gVisor's runsc, or `auto` (runsc where the engine has it)."""

    def __post_init__(self) -> None:
        if self.user == INIT_UID:
            raise ValueError(f"the sandbox's user cannot be {INIT_UID}, its init's own")


@dataclass(frozen=True)
class EgressPlan:
    """A job's way out, through a proxy of its own: what it allows when the sandbox starts
    (`sandbox.allow` changes it between phases), and settings for the sandbox's tools."""

    first: Allowance
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ExecResult:
    """One command's outcome. A non-zero exit is a result, not an error."""

    exit_code: int
    output: str
    duration: float
    timed_out: bool
    oom_killed: bool = False
    cancelled: bool = False
    blocked: tuple[str, ...] = ()
    """Hosts the egress proxy refused while the command ran."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.oom_killed or self.cancelled)
