"""A repository's setup step: network only on request, and only for its step."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sandbox import RepoSetupError, Sandbox, run_setup, setup_failure
from sandbox.setup import parse_repo_config

# The default route's gateway is the host on the bridge network.
GATEWAY = (
    "python3 -c 'import socket,struct; "
    'r=[l.split() for l in open("/proc/net/route")][1:]; '
    'print(next(socket.inet_ntoa(struct.pack("<L", int(g, 16)))'
    ' for _, d, g, *_ in r if d == "00000000"))'
    "'"
)


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello from the host")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def host_server() -> Iterator[int]:
    """An HTTP server on the host, reachable from the bridge network only."""
    server = ThreadingHTTPServer(("0.0.0.0", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.docker
def test_setup_gets_network_only_when_asked_and_only_for_its_step(
    box: Sandbox, host_server: int
) -> None:
    fetch = f'curl -sS -m 3 "http://$(cat gw):{host_server}/"'
    script = f"set -e\n{GATEWAY} > gw\n{fetch} > fetched.txt\n"
    with_network = run_setup(box, script, network=True, timeout=60)
    assert with_network.ok, with_network.output
    assert box.read_file("fetched.txt") == b"hello from the host"
    after = box.run(fetch)
    assert after.exit_code != 0
    assert "Couldn't connect" in after.output or "unreachable" in after.output
    without = run_setup(box, fetch, network=False, timeout=60)
    assert without.exit_code != 0
    assert box.run("tail -n +3 /proc/net/dev | cut -d: -f1").output.split() == ["lo"]


@pytest.mark.docker
def test_failed_setup_is_a_clear_outcome(box: Sandbox) -> None:
    result = run_setup(box, "echo installing\necho broken >&2\nexit 3\n", network=False, timeout=60)
    assert result.exit_code == 3
    message = setup_failure(result)
    assert message is not None
    assert message.startswith(".resolver/setup.sh exited with code 3")
    assert "installing\nbroken" in message
    slow = run_setup(box, "sleep 30", network=False, timeout=1)
    assert (setup_failure(slow) or "").startswith(".resolver/setup.sh timed out")
    assert setup_failure(run_setup(box, "true", network=False, timeout=60)) is None


@pytest.mark.parametrize(
    ("text", "network"),
    [("", False), ("setup:\n  network: false\n", False), ("setup: {network: true}", True)],
)
def test_config_asks_for_network(text: str, network: bool) -> None:
    assert parse_repo_config(text) is network


@pytest.mark.parametrize("text", ["setup: [", "setup:\n  network: bridge\n", "- 1\n"])
def test_bad_config_is_refused_with_a_reason(text: str) -> None:
    with pytest.raises(RepoSetupError, match=r"config\.yml"):
        parse_repo_config(text)
