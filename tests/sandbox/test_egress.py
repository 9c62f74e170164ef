"""Egress through a job's own Squid proxy: real Docker, real proxy, and stand-in outside hosts
in a container of the test's own (tests/sandbox/standins.py)."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography.fernet import Fernet

from resolver.cli.doctor import _egress as doctor_egress
from resolver.core.settings import Settings
from sandbox import (
    NOTHING,
    Allowance,
    EgressPlan,
    Sandbox,
    SandboxPolicy,
    open_sandbox,
    run_setup,
    squid,
)
from sandbox.container import remove_container
from sandbox.engine import SandboxError
from sandbox.proxy import LINK_MTU, PROXY_HOST
from sandbox.reaper import remove_orphan_egress
from tests.sandbox.conftest import DEPLOYMENT
from tests.sandbox.standins import ALLOWED, DENIED, OTHER_PORT, Outside

pytestmark = pytest.mark.docker

ONLY_ALLOWED = Allowance((ALLOWED,))
PIP = "pip download --no-deps --disable-pip-version-check -q -d /tmp/dl --trusted-host {h} "
PIP += "--index-url http://{h}/simple tiny"


@pytest.fixture
def open_egress(job_id: str) -> Iterator[Callable[[SandboxPolicy, Allowance], Sandbox]]:
    opened: list[Sandbox] = []

    def opener(policy: SandboxPolicy, first: Allowance) -> Sandbox:
        box = open_sandbox(job_id, policy, egress=EgressPlan(first))
        opened.append(box)
        return box

    yield opener
    for box in opened:
        box.__exit__(None, None, None)
        assert not _exists("container", box.egress.container_id if box.egress else "")
        assert not _exists("network", box.egress.network if box.egress else "")


def _exists(kind: str, name: str) -> bool:
    done = subprocess.run(["docker", kind, "inspect", name], capture_output=True, check=False)
    return done.returncode == 0


def _curl(url: str) -> str:
    return f"curl -sS -k -m 20 -o /dev/null -w '%{{http_code}}' {url}"


def test_allowed_host_is_reached_through_the_proxy_and_others_are_refused(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    box = open_egress(egress_policy, ONLY_ALLOWED)
    for url in (f"http://{ALLOWED}/hello", f"https://{ALLOWED}/hello"):
        reached = box.run(_curl(url))
        assert reached.ok and reached.output == "200", reached.output
        assert reached.blocked == ()
    refused = box.run(_curl(f"https://{DENIED}/hello"))
    assert refused.exit_code != 0
    assert "403" in refused.output
    assert refused.blocked == (DENIED,)
    plain = box.run(_curl(f"http://{DENIED}/hello"))
    assert plain.output == "403" and plain.blocked == (DENIED,)
    assert box.egress_hosts[ALLOWED].allowed == 2
    assert box.egress_hosts[DENIED].blocked == 2
    assert box.egress_hosts[DENIED].commands == [
        _curl(f"https://{DENIED}/hello"),
        _curl(f"http://{DENIED}/hello"),
    ]


def test_a_listed_host_is_reached_on_the_web_ports_alone(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    # A tunnel goes where it is asked: to the listed host's SSH, its database, or a service on
    # any other port of it. The stand-in answers on OTHER_PORT, so only the proxy can refuse.
    box = open_egress(egress_policy, ONLY_ALLOWED)
    tunnels = (f"{ALLOWED}:{OTHER_PORT}", f"{ALLOWED}:80", f"{ALLOWED}:22")
    for target in tunnels:
        tunnel = box.run(_curl(f"-p http://{target}/hello"))
        assert tunnel.exit_code != 0 and "403" in tunnel.output, (target, tunnel.output)
        assert tunnel.blocked == (ALLOWED,)
    for url in (f"http://{ALLOWED}:{OTHER_PORT}/hello", f"http://{ALLOWED}:443/hello"):
        plain = box.run(_curl(url))
        assert plain.output == "403" and plain.blocked == (ALLOWED,), (url, plain.output)
    assert box.egress_hosts[ALLOWED].allowed == 0


def test_a_port_the_allowance_names_is_reached_on_that_host_alone(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    # As `registries` allows an index whose URL names a port of its own.
    box = open_egress(egress_policy, Allowance((ALLOWED,), ports=((ALLOWED, OTHER_PORT),)))
    for how in ("", "-p "):
        reached = box.run(_curl(f"{how}http://{ALLOWED}:{OTHER_PORT}/hello"))
        assert reached.ok and reached.output == "200", (how, reached.output)
    tunnel = box.run(_curl(f"-p http://{ALLOWED}:22/hello"))
    assert "403" in tunnel.output and tunnel.blocked == (ALLOWED,)
    box.allow(Allowance((ALLOWED, DENIED)))  # reconfigured in place: the port goes with it
    refused = box.run(_curl(f"-p http://{ALLOWED}:{OTHER_PORT}/hello"))
    assert "403" in refused.output and refused.blocked == (ALLOWED,)


def _append_to_proxy_log(proxy: str, megabytes: int) -> bool:
    """Lines of about Squid's length appended to the proxy's access log, as requests would be."""
    line = "x" * 149
    fill = f"yes {line} | head -c {megabytes}000000 >> {squid.ACCESS_LOG}"
    done = subprocess.run(["docker", "exec", proxy, "sh", "-c", fill], capture_output=True)
    return done.returncode == 0


def test_a_log_larger_than_the_proxys_tmpfs_goes_through_it(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    """The access log lives on the proxy's 64 MB tmpfs: what has been read is given back, so
    a job's network outlives its 400,000th request."""
    box = open_egress(egress_policy, ONLY_ALLOWED)
    assert box.egress is not None
    for _ in range(3):  # 75 MB in all
        assert _append_to_proxy_log(box.egress.container_id, 25)
        reached = box.run(_curl(f"http://{ALLOWED}/hello"))
        assert reached.ok and reached.output == "200", reached.output


def test_a_proxy_that_stops_fails_the_command_with_its_reason(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    """Squid stops when it cannot log a request (it fails closed); the command says why."""
    box = open_egress(egress_policy, ONLY_ALLOWED)
    assert box.egress is not None
    assert not _append_to_proxy_log(box.egress.container_id, 70)  # more than fits, unread
    stopped = r"the egress proxy stopped: .*FATAL: logfileWrite: .*No space left on device"
    with pytest.raises(SandboxError, match=stopped):
        box.run(_curl(f"http://{ALLOWED}/hello"))


def test_every_request_of_a_command_is_counted_when_it_returns(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    box = open_egress(egress_policy, ONLY_ALLOWED)
    for rounds in (1, 2, 3):
        burst = box.run(f"for i in 1 2 3 4 5 6 7 8; do {_curl(f'http://{DENIED}/x')}; done")
        assert burst.blocked == (DENIED,)
        assert box.egress_hosts[DENIED].blocked == 8 * rounds
    assert sorted(box.egress_hosts) == [DENIED]  # the log reader's own marks are not counted


def test_pip_and_git_go_through_the_proxy_and_are_refused_alike(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    box = open_egress(egress_policy, ONLY_ALLOWED)
    pip = box.run(PIP.format(h=ALLOWED) + " && ls /tmp/dl")
    assert pip.ok, pip.output
    assert "tiny-1.0-py3-none-any.whl" in pip.output
    clone = box.run(f"git clone -q http://{ALLOWED}/repo.git /tmp/repo && cat /tmp/repo/README")
    assert clone.ok and clone.output.strip() == "readme", clone.output
    refused_pip = box.run(PIP.format(h=DENIED).replace("-q ", "") + " --retries 0 --timeout 5")
    assert refused_pip.exit_code != 0 and refused_pip.blocked == (DENIED,)
    refused_git = box.run(f"git clone -q http://{DENIED}/repo.git /tmp/other")
    assert refused_git.exit_code != 0 and refused_git.blocked == (DENIED,)
    assert "403" in refused_git.output
    commands = box.egress_hosts[DENIED].commands
    assert [c.split()[0] for c in commands] == ["pip", "git"]


@pytest.fixture
def host_listeners() -> Iterator[tuple[int, socket.socket]]:
    """A TCP server and a UDP socket on every interface of the host, as a service the engine's
    host runs would be."""
    server = ThreadingHTTPServer(("0.0.0.0", 0), BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", 0))
    yield server.server_address[1], udp
    udp.close()
    server.shutdown()
    server.server_close()


# The default route's gateway: the host's address on the network, if it had one.
GATEWAY = (
    "python3 -c 'import socket,struct; "
    'r=[l.split() for l in open("/proc/net/route")][1:]; '
    'print(next(socket.inet_ntoa(struct.pack("<L", int(g, 16)))'
    ' for _, d, g, *_ in r if d == "00000000"))'
    "'"
)
# An outside name, looked up in the sandbox: getent's 2 is "not found", and timeout's 124 a
# lookup still waiting after 5 s (as every one did for 20 s, glibc's retries, before the
# sandbox's resolver was given one try of 1 s).
LOOKUP = "timeout 5 getent hosts {}; echo $?"
SEND_UDP = (
    "python3 -c 'import socket, sys; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
    '[s.sendto(b"x", (a, int(sys.argv[1]))) for a in sys.argv[2:]]\' '
)


def test_nothing_gets_around_the_proxy(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox],
    egress_policy: SandboxPolicy,
    stand_ins: Outside,
    host_listeners: tuple[int, socket.socket],
) -> None:
    box = open_egress(egress_policy, ONLY_ALLOWED)
    ip, (tcp_port, udp) = stand_ins.address, host_listeners
    gateway = box.run(GATEWAY).output.strip()
    for url in (f"http://{ip}/hello", f"http://{gateway}:{tcp_port}/"):
        direct = box.run(f"curl -sS -m 5 --noproxy '*' -o /dev/null -w '%{{http_code}}' {url}")
        assert direct.exit_code != 0 and direct.output.endswith("000"), direct.output
    ssh = box.run(f"timeout 5 bash -c 'echo > /dev/tcp/{ip}/22'")
    assert ssh.exit_code != 0
    port = udp.getsockname()[1]
    box.run(f"{SEND_UDP} {port} {gateway} {ip} 2>&1; true")
    udp.settimeout(2)
    with pytest.raises(TimeoutError):
        udp.recvfrom(16)
    assert box.run(LOOKUP.format(ALLOWED)).output.strip() == "2"
    interfaces = box.run("tail -n +3 /proc/net/dev | cut -d: -f1").output.split()
    assert sorted(interfaces) == ["eth0", "lo"]


def test_phases_switch_lists_in_place(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    box = open_egress(egress_policy, ONLY_ALLOWED)
    setup = run_setup(box, f"{_curl(f'http://{ALLOWED}/hello')} > fetched", timeout=60)
    assert setup.ok, setup.output
    assert box.read_file("fetched") == b"200"
    box.allow(NOTHING)
    after = box.run(_curl(f"http://{ALLOWED}/hello"))
    assert after.output == "403" and after.blocked == (ALLOWED,)
    box.allow(Allowance((DENIED,)))
    assert box.run(_curl(f"http://{DENIED}/hello")).output == "200"
    assert box.egress_hosts[ALLOWED].commands == [_curl(f"http://{ALLOWED}/hello")]


def test_open_reaches_public_hosts_only(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    # The stand-ins are on a private network, like the engine's host and its neighbours.
    box = open_egress(egress_policy, Allowance(anywhere=True))
    refused = box.run(_curl(f"http://{ALLOWED}/hello"))
    assert refused.output == "403" and refused.blocked == (ALLOWED,)


def test_a_proxy_that_cannot_start_fails_the_first_command_and_leaves_nothing(
    egress_policy: SandboxPolicy, image: str, job_id: str
) -> None:
    # The proxy starts alongside the sandbox; its failure surfaces before the first command.
    broken = replace(egress_policy, proxy_image=image)  # an image without Squid
    box = open_sandbox(job_id, broken, egress=EgressPlan(ONLY_ALLOWED))
    assert box.egress is not None
    try:
        with pytest.raises(SandboxError, match="egress proxy stopped before it listened"):
            box.run("true")
    finally:
        box.__exit__(None, None, None)
    assert not _exists("container", box.container_id)
    assert not _exists("container", box.egress.container_id)
    assert not _exists("network", box.egress.network)


def test_the_sandbox_finds_its_proxy_by_a_fixed_name_and_nothing_else(
    open_egress: Callable[[SandboxPolicy, Allowance], Sandbox], egress_policy: SandboxPolicy
) -> None:
    box = open_egress(egress_policy, ONLY_ALLOWED)
    assert box.run("printenv HTTPS_PROXY").output.strip() == f"http://{PROXY_HOST}:3128"
    assert box.egress is not None
    found = box.run(f"getent ahostsv4 {PROXY_HOST} | head -n 1").output.split()
    assert found[:1] == [box.egress.ip]
    assert box.run(f"grep -cE '[[:space:]]{PROXY_HOST}$' /etc/hosts").output.strip() == "1"
    # Any other name fails within seconds, and the agent's user cannot change either file.
    assert box.run(LOOKUP.format(ALLOWED)).output.strip() == "2"
    for path in ("/etc/hosts", "/etc/resolv.conf"):
        assert box.run(f"echo 10.0.0.1 {ALLOWED} >> {path}").exit_code != 0
    # Its link to the proxy takes large packets (Squid's 4 KB writes are one segment each),
    # seen from the proxy's end: under gVisor a sandbox has no /sys/class/net.
    argv = ["docker", "exec", box.egress.container_id, "sh", "-c", "cat /sys/class/net/*/mtu"]
    links = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    assert str(LINK_MTU) in links  # beside the uplink's and loopback's


def test_the_reaper_removes_a_proxy_and_network_whose_sandbox_is_gone(
    egress_policy: SandboxPolicy, job_id: str
) -> None:
    box = open_sandbox(job_id, egress_policy, egress=EgressPlan(ONLY_ALLOWED))
    assert box.egress is not None
    proxy, network = box.egress.container_id, box.egress.network
    try:
        remove_container(box.container_id)  # a worker that died without cleaning up
        assert remove_orphan_egress(DEPLOYMENT, datetime.now(UTC)) == []  # young: left alone
        later = datetime.now(UTC) + timedelta(hours=1)
        removed = remove_orphan_egress(DEPLOYMENT, later)
        assert sorted(removed) == sorted([network, network])  # the proxy and network share a name
        assert not _exists("container", proxy) and not _exists("network", network)
    finally:
        box.__exit__(None, None, None)


def _settings(image: str, **values: str) -> Settings:
    key = Fernet.generate_key().decode()
    return Settings(
        _env_file=None, secret_keys=key, sandbox_image=image, deployment_id=DEPLOYMENT, **values
    )


def test_doctor_shows_an_allowed_host_reached_and_a_denied_one_refused(
    image: str, stand_ins: Outside, proxy_image: str
) -> None:
    settings = _settings(
        image,
        sandbox_egress="allowlist",
        sandbox_egress_allow=ALLOWED,
        sandbox_egress_uplink=stand_ins.network,
    )
    check = doctor_egress(settings)
    assert check.status == "ok", check.detail
    assert check.detail == (f"allowlist: {ALLOWED} reachable; denied.invalid refused by the proxy")


def test_doctor_under_none_shows_loopback_alone(image: str) -> None:
    check = doctor_egress(_settings(image))
    assert (check.status, check.detail) == ("ok", "none: interfaces ['lo']")
