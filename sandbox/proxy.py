"""A job's egress: a Docker network of its own, created `--internal` (no gateway, no route out),
and a Squid proxy on it that is also on the uplink network, so the proxy is the sandbox's only
way out. Names are resolved by the proxy; the sandbox needs no DNS.

Each network is a /28 of the operator's range (RESOLVER_SANDBOX_EGRESS_SUBNETS), picked at
random, one the engine already holds skipped: the engine's own pools run out at about 30
networks, fewer than the jobs a host runs. The proxy takes the network's last address, known
before either container starts.

The proxy starts while the sandbox does: the sandbox finds it by a fixed name, in its own
/etc/hosts, and waits for Squid to listen only before its first command (`EgressProxy.ready`).
Its access log is read through a shell attached to the proxy (sandbox/proxylog.py).

The proxy, the network and the sandbox share a token in their names, which is how the reaper
finds a proxy or network whose sandbox is gone.
"""

from __future__ import annotations

import ipaddress
import logging
import random
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import docker.errors
from docker.types import IPAMConfig, IPAMPool, LogConfig

from sandbox import squid
from sandbox.container import remove_container
from sandbox.engine import SandboxError, SandboxNotFoundError, client, engine_errors
from sandbox.execution import capture
from sandbox.hosts import Allowance
from sandbox.naming import (
    LABEL_CREATED,
    LABEL_DEPLOYMENT,
    LABEL_JOB,
    LABEL_OWNER,
    LABEL_ROLE,
    PROXY_HOST,
)
from sandbox.policy import TMP
from sandbox.proxylog import LISTENED, TIMED_OUT, WAIT, ProxyLog, ProxyLogError

log = logging.getLogger(__name__)

# Debian's base-passwd gives `proxy` this fixed uid; Squid runs as it, without capabilities.
PROXY_UID: Final = 13
ROLE_PROXY: Final = "egress-proxy"
ROLE_NETWORK: Final = "egress-network"
# `--internal` alone still gives the host an address on the network, and the containers a
# default route to it, so a sandbox could reach any service the host binds to all interfaces
# (measured: HTTP 200 from the host through the gateway). Without that address nothing answers.
# The link between the sandbox and its proxy takes packets as large as loopback's: Squid writes
# a plain-HTTP reply to the client 4 KB at a time (its compiled-in client buffer), and at the
# default 1,500 bytes each write is three segments and their acknowledgements; measured with
# bench/egress.py, this costs the proxy about a quarter less CPU per MB. The uplink is the
# operator's and keeps its own.
LINK_MTU: Final = 65000
SUBNET_PREFIX: Final = 28
"""Each job's network: 14 addresses, for a sandbox and its proxy."""
NETWORK_TRIES: Final = 32
"""Subnets of the range tried, at random, before a new network fails."""
INTERNAL_OPTIONS: Final = {
    "com.docker.network.bridge.inhibit_ipv4": "true",
    "com.docker.network.driver.mtu": str(LINK_MTU),
}
# Written to the tmpfs at start: squid.conf, then the domain list, then Squid in the foreground
# (as pid 1, so `kill -HUP 1` below reaches it), its important messages on its standard error
# as well as in cache.log: they outlive its container's tmpfs (`_last_words`).
_START: Final = (
    f'printf %s "$1" > {squid.CONFIG} && printf %s "$2" > {squid.ALLOW} '
    f"&& exec squid -N -d 1 -f {squid.CONFIG}"
)
# The new configuration, then a reconfigure in place (the port reopens; no restart), waited for
# in the same exec: an exec costs tens of milliseconds.
_RECONFIGURE: Final = (
    f'printf %s "$1" > {squid.CONFIG}.new && printf %s "$2" > {squid.ALLOW} '
    f"&& mv {squid.CONFIG}.new {squid.CONFIG} && set -- $({LISTENED}) && kill -HUP 1 && {WAIT}"
)


def egress_name(token: str, job_id: str) -> str:
    """The name of a job's proxy container and of its network."""
    return f"resolver-egress-{token}-{job_id}"


@dataclass
class EgressProxy:
    """A proxy on the job's internal network, reached there as `address`; it may still be
    starting (see `ready`)."""

    container_id: str
    network: str
    ip: str
    """The proxy's address on the job's network (the sandbox's /etc/hosts names it)."""
    address: str = PROXY_HOST
    _starting: Future[ProxyLog] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{squid.PORT}"

    def ready(self) -> ProxyLog:
        """Wait until Squid listens; SandboxError (each time) if it could not start."""
        if self._starting is None:
            raise SandboxError("egress proxy: never started")
        return self._starting.result()

    def allow(self, allowance: Allowance) -> None:
        """Make the proxy enforce `allowance` from now on: Squid rereads its configuration in
        place, and this returns once it listens again."""
        self.ready()
        config, domains = squid.render_config(allowance), squid.render_allow(allowance)
        argv = ["bash", "-c", _RECONFIGURE, "bash", config, domains]
        code, output = capture(self.container_id, argv, PROXY_UID, squid.DIR)
        if code != 0:
            raise SandboxError(f"egress proxy: cannot reconfigure: {self._tail(output)}")

    def _tail(self, output: bytes) -> str:
        _code, tail = capture(
            self.container_id, ["tail", "-n", "5", squid.CACHE_LOG], PROXY_UID, squid.DIR
        )
        return f"{output.decode(errors='replace')}{tail.decode(errors='replace')}".strip()

    def read_log(self) -> list[squid.LogEntry]:
        """The requests logged since the last read: every one Squid had answered before this
        call (see sandbox/proxylog.py). SandboxError, with Squid's last words, if the proxy
        has stopped."""
        log = self.ready()
        try:
            return squid.parse_log(log.read())
        except ProxyLogError as error:
            raise SandboxError(
                f"the egress proxy stopped: {_last_words(self.container_id)}"
            ) from error

    def close(self) -> None:
        """Remove the proxy, then its network (the sandbox must be gone first). A network the
        engine still holds is left to the reaper rather than failing the job."""
        if self._starting is not None:
            wait([self._starting])  # its failure, if any, was the caller's to see
            if self._starting.exception() is None:
                self._starting.result().close()
        remove_container(self.container_id)
        try:
            remove_network(self.network)
        except SandboxError:
            log.warning("sandbox.egress_network_kept", exc_info=True, extra={"net": self.network})


def open_proxy(
    image: str,
    uplink: str,
    name: str,
    labels: Mapping[str, str],
    allowance: Allowance,
    subnets: str,
) -> EgressProxy:
    """Create the internal network `name` in `subnets` and the proxy on it (as `PROXY_HOST`, at
    the network's last address) and on `uplink`, and start the proxy in the background: the
    network exists when this returns, so the sandbox can be started on it at once. Nothing is
    left behind if a step fails; `close` removes both whether or not the start has finished."""
    api = client().api
    subnet = create_network(name, _labels(labels, ROLE_NETWORK), subnets)
    ip = str(subnet.broadcast_address - 1)
    container_id = ""
    try:
        container_id = _create_proxy(image, uplink, name, labels, allowance)
        with engine_errors("connect egress proxy"):
            api.connect_container_to_network(
                container_id, name, aliases=[PROXY_HOST], ipv4_address=ip
            )
        starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="egress-start")
        starting = starter.submit(_start, container_id)
        starter.shutdown(wait=False)
    except BaseException:
        if container_id:
            remove_container(container_id)
        remove_network(name)
        raise
    return EgressProxy(container_id, name, ip, _starting=starting)


def create_network(name: str, labels: Mapping[str, str], subnets: str) -> ipaddress.IPv4Network:
    """Create the internal network `name` on a /28 of `subnets` that the engine does not hold
    yet, tried at random; the subnet it got."""
    pool = ipaddress.IPv4Network(subnets)
    count = 2 ** (SUBNET_PREFIX - pool.prefixlen)
    first, size = int(pool.network_address), 2 ** (32 - SUBNET_PREFIX)
    taken = ""
    for index in random.sample(range(count), min(count, NETWORK_TRIES)):
        subnet = ipaddress.IPv4Network((first + index * size, SUBNET_PREFIX))
        ipam = IPAMConfig(pool_configs=[IPAMPool(subnet=str(subnet))])
        try:
            with engine_errors("create egress network"):
                client().api.create_network(
                    name,
                    driver="bridge",
                    internal=True,
                    options=dict(INTERNAL_OPTIONS),
                    labels=dict(labels),
                    ipam=ipam,
                )
        except SandboxError as error:
            if not _overlaps(error):
                raise
            taken = str(error)
            continue
        return subnet
    raise SandboxError(
        f"egress: no free /{SUBNET_PREFIX} in RESOLVER_SANDBOX_EGRESS_SUBNETS ({subnets}) "
        f"after {min(count, NETWORK_TRIES)} tries; widen it. The engine said: {taken}"
    )


def _overlaps(error: SandboxError) -> bool:
    """Whether the engine refused a subnet because another network holds it."""
    cause = error.__cause__
    return isinstance(cause, docker.errors.APIError) and "overlap" in str(cause).lower()


def _start(container_id: str) -> ProxyLog:
    with engine_errors("start egress proxy"):
        client().api.start(container_id)
    try:
        return ProxyLog.open(container_id, PROXY_UID)
    except SandboxError as error:
        timed_out = isinstance(error, ProxyLogError) and error.code == TIMED_OUT
        what = "did not start listening" if timed_out else "stopped before it listened"
        raise SandboxError(f"egress proxy {what}: {_last_words(container_id)}") from error


def _create_proxy(
    image: str, uplink: str, name: str, labels: Mapping[str, str], allowance: Allowance
) -> str:
    api = client().api
    host_config = api.create_host_config(
        network_mode=uplink,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges:true"],
        read_only=True,
        tmpfs={squid.DIR: "rw,nosuid,nodev,size=64m,mode=1777", TMP: "rw,nosuid,size=16m"},
        mem_limit="256m",
        memswap_limit="256m",
        pids_limit=128,
        nano_cpus=int(1e9),
        # Squid's own output (its access log is a file, read by ProxyLog): capped, whatever the
        # engine's default.
        log_config=LogConfig(type="json-file", config={"max-size": "16m", "max-file": "2"}),
    )
    command = [
        "sh",
        "-c",
        _START,
        "sh",
        squid.render_config(allowance),
        squid.render_allow(allowance),
    ]
    with engine_errors("create egress proxy"):
        created: str = api.create_container(
            image,
            command=command,
            name=name,
            user=f"{PROXY_UID}:{PROXY_UID}",
            labels=_labels(labels, ROLE_PROXY),
            host_config=host_config,
        )["Id"]
    return created


def _labels(labels: Mapping[str, str], role: str) -> dict[str, str]:
    return {**labels, LABEL_ROLE: role}


def _last_words(container_id: str) -> str:
    """What the proxy's container printed last (it is Squid's, never the sandbox's): its fatal
    error where it gave one, else the end of its output."""
    try:
        with engine_errors("read egress proxy's output"):
            output: bytes = client().api.logs(container_id, stdout=False, stderr=True, tail=40)
    except SandboxError as error:
        return str(error)
    lines = output.decode(errors="replace").strip().splitlines()
    fatal = [line for line in lines if "FATAL:" in line]
    return "\n".join(fatal[-1:] or lines[-5:])


def remove_network(name: str) -> bool:
    """Remove a network; False when it was already gone."""
    try:
        with engine_errors("remove egress network"):
            client().api.remove_network(name)
    except SandboxNotFoundError:
        return False
    return True


def list_egress(deployment: str | None, role: str) -> list[dict[str, Any]]:
    """The engine's records of egress proxies (containers) or networks, of one deployment."""
    filters = [f"{LABEL_ROLE}={role}"]
    if deployment is not None:
        filters.append(f"{LABEL_DEPLOYMENT}={deployment}")
    api = client().api
    with engine_errors("list egress"):
        if role == ROLE_PROXY:
            return list(api.containers(all=True, filters={"label": filters}))
        return list(api.networks(filters={"label": filters}))


def egress_labels(job_id: str | None, deployment: str, owner: str | None) -> dict[str, str]:
    return {
        LABEL_JOB: job_id or "",
        LABEL_CREATED: datetime.now(UTC).isoformat(timespec="seconds"),
        LABEL_DEPLOYMENT: deployment,
        LABEL_OWNER: owner or "",
    }


def proxy_env(url: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The sandbox's environment for the proxy at `url`: the conventional variables (both
    cases: tools disagree), pip's, npm's and git's own, plus `extra` (the host's registries)."""
    local = "localhost,127.0.0.1,::1"
    env = {
        "HTTP_PROXY": url,
        "HTTPS_PROXY": url,
        "NO_PROXY": local,
        "PIP_PROXY": url,
        "npm_config_proxy": url,
        "npm_config_https_proxy": url,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.proxy",
        "GIT_CONFIG_VALUE_0": url,
    }
    env.update({name.lower(): env[name] for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")})
    return {**env, **extra}
