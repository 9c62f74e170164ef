"""The peer of bench/ingress: a Probot app (bench/probot) installed from the npm registry into
var/bench/probot and started the way Probot documents, `probot run ./app.js`, on loopback."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from _load import free_port, wait_until_answering

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "bench/probot"
INSTALLED = ROOT / "var/bench/probot"
FILES = ("package.json", "package-lock.json", ".npmrc", "app.js")
LOG_LEVEL = "warn"
"""At Probot's default, info, its HTTP logger writes a line for every request, which cost it about a
fifth more CPU per request when measured; our server logs a line per batch of jobs written."""


@dataclass(frozen=True)
class Peer:
    port: int
    pid: int
    """The node process itself, for its CPU time."""
    version: str
    node: str
    path: str = "/api/github/webhooks"
    """Probot's default webhook path."""


def install() -> Path:
    """Copy the app into var/bench/probot and `npm ci` it, unless the same lock is installed."""
    INSTALLED.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(SOURCE / name, INSTALLED / name)
    lock = hashlib.sha256((SOURCE / "package-lock.json").read_bytes()).hexdigest()
    stamp = INSTALLED / ".installed-lock"
    if (INSTALLED / "node_modules").is_dir() and stamp.exists() and stamp.read_text() == lock:
        return INSTALLED
    stamp.unlink(missing_ok=True)
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("the Probot peer needs node and npm (or run with --no-peer)")
    print(f"installing the Probot peer into {INSTALLED} (npm ci)", file=sys.stderr, flush=True)
    # npm trusts the system's certificate store, as pip, git and uv do here (where a proxy's CA
    # lives): Node's own is compiled in, and CI's bare environment sets no NODE_EXTRA_CA_CERTS.
    options = f"{os.environ.get('NODE_OPTIONS', '')} --use-openssl-ca".strip()
    done = subprocess.run(
        [npm, "ci", "--prefix", str(INSTALLED), "--no-audit", "--no-fund"],
        capture_output=True, text=True, check=False, env={**os.environ, "NODE_OPTIONS": options},
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"npm ci failed:\n{done.stderr[-2000:]}")
    stamp.write_text(lock)
    return INSTALLED


def private_key() -> str:
    """A throwaway RSA key: Probot wants an app's key to start, and never uses it here."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


def env(port: int, secret: str) -> dict[str, str]:
    """Only what Probot reads, so nothing from this shell (a webhook proxy, a GitHub host)
    reaches it. NODE_ENV=production as deployed: JSON logs, no setup mode."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "NODE_ENV": "production",
        "APP_ID": "1",
        "PRIVATE_KEY": private_key(),
        "WEBHOOK_SECRET": secret,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "LOG_LEVEL": LOG_LEVEL,
        "LOG_FORMAT": "json",
    }


@contextlib.contextmanager
def probot(secret: str, log: Path) -> Iterator[Peer]:
    """Install and start the Probot app on a free loopback port; stop it afterwards."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("the Probot peer needs node and npm (or run with --no-peer)")
    home = install()
    package = home / "node_modules/probot"
    version = json.loads((package / "package.json").read_text())["version"]
    port = free_port()
    with log.open("w") as out:
        # node itself, not npm or a shell: its pid is the server's, for its CPU time.
        server = subprocess.Popen(
            [node, str(package / "bin/probot.js"), "run", "./app.js"],
            cwd=home, env=env(port, secret), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            # Probot's `GET /ping` answers once its app is loaded.
            wait_until_answering("Probot", port, "/ping", server, log)
            runtime = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
            yield Peer(port, server.pid, version, runtime.strip())
        finally:
            server.terminate()
            server.wait(timeout=10)
