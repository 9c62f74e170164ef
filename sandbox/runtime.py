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
from typing import Final, Literal

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
