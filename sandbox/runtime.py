"""Which OCI runtime a sandbox runs under: runc (the host's kernel) or gVisor's runsc (a kernel
of its own in user space between the agent's commands and the host's).

The engine names its runtimes in daemon.json. gVisor needs two entries there: `runsc` with its
own network stack switched off (`--network=none`; on an engine whose containers it takes for the
root network namespace, it refuses to start any other way), for jobs without network, and
`runsc-hostinet` (`--network=host`: socket calls go to the host's kernel, inside the container's
own network namespace), for jobs whose only way out is their egress proxy.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, Literal

from docker.types import Ulimit

from sandbox.engine import SandboxError, client, engine_errors

Wanted = Literal["runc", "runsc", "auto"]

RUNC: Final = "runc"
RUNSC: Final = "runsc"
RUNSC_NET: Final = "runsc-hostinet"
DAEMON_JSON: Final = (
    '"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}, '
    '"runsc-hostinet": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=host"]}}'
)


class RuntimeMissingError(SandboxError):
    """The runtime the settings ask for is not registered with the engine."""


@dataclass(frozen=True)
class Runtimes:
    """The engine runtimes a sandbox gets: `plain` without network, `network` on a job's
    internal egress network."""

    plain: str
    network: str


def choose_runtimes(wanted: Wanted, registered: frozenset[str]) -> Runtimes:
    """The runtimes for `wanted` among the engine's `registered` ones: `auto` takes runsc where
    the engine has it (and runc for jobs with network when it lacks runsc-hostinet); `runsc`
    demands both entries and says how to add them."""
    if wanted == RUNC:
        return Runtimes(RUNC, RUNC)
    if wanted == "auto":
        plain = RUNSC if RUNSC in registered else RUNC
        return Runtimes(plain, RUNSC_NET if RUNSC_NET in registered and plain == RUNSC else RUNC)
    missing = [name for name in (RUNSC, RUNSC_NET) if name not in registered]
    if missing:
        raise RuntimeMissingError(
            f"RESOLVER_SANDBOX_RUNTIME=runsc, but the Docker engine has no {' or '.join(missing)} "
            f"runtime: install gVisor's runsc (Debian: apt-get install runsc), add {DAEMON_JSON} "
            "to the engine's daemon.json and reload it (kill -HUP the dockerd)"
        )
    return Runtimes(RUNSC, RUNSC_NET)


@lru_cache(maxsize=4)
def engine_runtimes(wanted: Wanted) -> Runtimes:
    """`choose_runtimes` against the engine's registered runtimes, asked once per process."""
    with engine_errors("list runtimes"):
        registered = frozenset(client().info().get("Runtimes") or {})
    return choose_runtimes(wanted, registered)


# gVisor's kernel runs each process inside on host tasks of its own (about 20 under the ptrace
# platform, measured: 100 sleeping processes inside, 1,956 host tasks), all in the container's
# pids cgroup. A cgroup limit sized for the processes inside stops the sentry at its first fork
# past it, and the whole container with it. Under runsc the limit on processes is gVisor's own
# RLIMIT_NPROC, counted by its kernel for the sandbox's user; the host cgroup only bounds the
# sentry, at the same ratio.
HOST_TASKS_PER_PROCESS: Final = 24
HOST_TASKS_BASE: Final = 256


def process_limits(runtime: str, pids: int) -> dict[str, Any]:
    """The HostConfig arguments that hold the container to `pids` processes under `runtime`."""
    if not runtime.startswith(RUNSC):
        return {"pids_limit": pids}
    return {
        "pids_limit": pids * HOST_TASKS_PER_PROCESS + HOST_TASKS_BASE,
        "ulimits": [Ulimit(name="nproc", soft=pids, hard=pids)],
    }
