"""Create, start, rename and remove sandbox containers under the policy."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Final

from docker.utils import parse_bytes

from sandbox.engine import SandboxError, SandboxNotFoundError, client, engine_errors
from sandbox.naming import PROXY_HOST, build_labels
from sandbox.policy import HOME, INIT_USER, TMP, WORKDIR, SandboxPolicy
from sandbox.runtime import engine_runtimes, process_limits

BRIDGE: Final = "bridge"
HOSTNAME: Final = "sandbox"
# The engine's resolver forwards a name it does not know to these servers, from inside the
# container: nothing listens on the sandbox's own loopback, so every outside lookup fails.
NO_DNS: Final = "127.0.0.1"
# On an internal network the engine's resolver leaves an outside name unanswered rather than
# forward it, and glibc waited out 5 s twice for A and again for AAAA: 20 s before a tool that
# resolves a name itself (not through the proxy) heard that it does not exist. One try of 1 s
# each; the proxy's own name is in /etc/hosts, so no lookup that matters waits on the engine.
DNS_OPTIONS: Final = ("timeout:1", "attempts:1")


def host_config_args(
    policy: SandboxPolicy, volume: str, network_mode: str, connected: bool = False
) -> dict[str, Any]:
    """The engine's HostConfig for the policy: no capabilities, no secrets, bounded resources,
    under the policy's runtime (its variant with network when the sandbox is `connected`)."""
    runtimes = engine_runtimes(policy.runtime)
    runtime = runtimes.network if connected else runtimes.plain
    tmp_opts = "rw,nosuid,nodev"
    owner = f"uid={policy.user},gid={policy.user}"
    # The workspace is a tmpfs volume: its pages count against the container's memory, so the
    # limit makes room for a full workspace on top of what the processes may use.
    memory = parse_bytes(policy.memory) + parse_bytes(policy.workspace_size)
    return {
        "binds": {volume: {"bind": WORKDIR, "mode": "rw"}},
        "network_mode": network_mode,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "read_only": policy.read_only,
        "tmpfs": {
            TMP: f"{tmp_opts},size={policy.tmp_size},mode=1777",
            HOME: f"{tmp_opts},size={policy.home_size},{owner},mode=0755",
        },
        "mem_limit": memory,
        # Equal to the memory limit: no swap, so a memory hog meets the OOM killer quickly.
        "memswap_limit": memory,
        **process_limits(runtime, policy.pids),
        "nano_cpus": int(policy.cpus * 1e9),
        "ipc_mode": "private",
        "runtime": runtime,
    }


def start_container(
    policy: SandboxPolicy,
    name: str,
    volume: str,
    job_id: str | None,
    owner: str | None = None,
    network: tuple[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Create and start a container on the workspace `volume`, labelled with its job and the
    attempt (`owner`) that started it; return its id. Nothing is left behind if a step fails.
    With `network` (a job's internal egress network, and its proxy's address there) it is on
    that network alone."""
    api = client().api
    mode = network[0] if network else _network_mode(policy)
    connected = network is not None or policy.network == BRIDGE
    host_config = host_config_args(policy, volume, mode, connected)
    if network:
        # Names are the proxy's business: the sandbox knows the proxy's, and no other.
        host_config["dns"] = [NO_DNS]
        host_config["dns_opt"] = list(DNS_OPTIONS)
        host_config["extra_hosts"] = {PROXY_HOST: network[1]}
    with engine_errors("create sandbox"):
        container_id: str = api.create_container(
            policy.image,
            name=name,
            # Its own processes are out of the agent's reach; every exec names the agent's user.
            user=INIT_USER,
            working_dir=WORKDIR,
            hostname=HOSTNAME,
            environment=dict(env or {}),
            labels=build_labels(job_id, volume, datetime.now(UTC), policy.deployment, owner),
            host_config=api.create_host_config(**host_config),
        )["Id"]
    try:
        with engine_errors("start sandbox"):
            if mode == BRIDGE and policy.network == "none":
                api.disconnect_container_from_network(container_id, BRIDGE)
            api.start(container_id)
    except SandboxError:
        remove_container(container_id)
        raise
    return container_id


def remove_container(container_id: str) -> bool:
    """Force-remove a container; False when it was already gone."""
    try:
        with engine_errors("remove sandbox"):
            client().api.remove_container(container_id, force=True, v=True)
    except SandboxNotFoundError:
        return False
    return True


def rename_container(container_id: str, name: str) -> None:
    with engine_errors("rename sandbox"):
        client().api.rename(container_id, name)


@lru_cache(maxsize=1)
def bridge_available() -> bool:
    """Whether the engine has its default bridge; it may run with `--bridge=none`."""
    with engine_errors("list networks"):
        return bool(client().api.networks(names=[BRIDGE]))


def _network_mode(policy: SandboxPolicy) -> str:
    # A container created in "none" mode can never join a network, yet a repository's setup may
    # need one. So the container is created on the bridge and disconnected before it starts.
    return BRIDGE if policy.network == BRIDGE or bridge_available() else "none"
