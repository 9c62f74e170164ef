"""Stand-in outside hosts for the egress tests: one container of the test's own on a network of
the test's own, answering as `allowed.test` and `denied.test` over HTTP (a file, a pip index with
one wheel, a git repository over dumb HTTP) and HTTPS (a self-signed certificate), and over
HTTP on `OTHER_PORT` too, as an index on a port of its own would."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

ALLOWED = "allowed.test"
DENIED = "denied.test"
OTHER_PORT = 8080

# Runs as root in the stand-in: writes the site, then serves it on 80, 443 and OTHER_PORT.
_SERVER = r"""
set -e
mkdir -p /srv/www/simple/tiny /srv/www/files && cd /srv/www
echo "hello from outside" > hello
python3 - <<'PY'
import base64, hashlib, zipfile
name = "tiny-1.0-py3-none-any.whl"
files = {
    "tiny/__init__.py": b"",
    "tiny-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n",
    "tiny-1.0.dist-info/WHEEL":
        b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
record = "".join(f"{p},sha256={digest(d)},{len(d)}\n" for p, d in files.items())
record += "tiny-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(f"files/{name}", "w") as wheel:
    for path, data in files.items():
        wheel.writestr(path, data)
    wheel.writestr("tiny-1.0.dist-info/RECORD", record)
open("simple/tiny/index.html", "w").write(f'<a href="../../files/{name}">{name}</a>\n')
PY
git init -q --bare repo.git
git init -q /tmp/work && cd /tmp/work && echo readme > README
git add README && git -c user.name=t -c user.email=t@example.org commit -qm first
git push -q /srv/www/repo.git HEAD:refs/heads/main && cd /srv/www
git -C repo.git symbolic-ref HEAD refs/heads/main && git -C repo.git update-server-info
openssl req -x509 -newkey rsa:2048 -nodes -keyout /tmp/k.pem -out /tmp/c.pem -days 1 \
  -subj /CN=allowed.test 2>/dev/null
exec python3 - <<'PY'
import functools, http.server, ssl, threading
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="/srv/www")
plain = http.server.ThreadingHTTPServer(("", 80), handler)
secure = http.server.ThreadingHTTPServer(("", 443), handler)
other = http.server.ThreadingHTTPServer(("", 8080), handler)  # OTHER_PORT
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain("/tmp/c.pem", "/tmp/k.pem")
secure.socket = context.wrap_socket(secure.socket, server_side=True)
threading.Thread(target=plain.serve_forever, daemon=True).start()
threading.Thread(target=other.serve_forever, daemon=True).start()
print("serving", flush=True)
secure.serve_forever()
PY
"""


@dataclass(frozen=True)
class Outside:
    """The stand-ins' network (a proxy's uplink in the tests) and their address on it."""

    network: str
    address: str


def _docker(*args: str) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@contextmanager
def outside(image: str, name: str, labels: dict[str, str]) -> Iterator[Outside]:
    """Start the stand-ins on a network named `name`; remove both afterwards."""
    label_args = [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]
    _docker("network", "create", *label_args, name)
    try:
        _docker(
            "run", "-d", "--name", name, "--network", name, "--user", "0", *label_args,
            "--network-alias", ALLOWED, "--network-alias", DENIED, image, "bash", "-c", _SERVER,
        )  # fmt: skip
        try:
            _wait_serving(name)
            address = _docker(
                "inspect",
                "-f",
                f'{{{{(index .NetworkSettings.Networks "{name}").IPAddress}}}}',
                name,
            )
            yield Outside(name, address)
        finally:
            _docker("rm", "-f", name)
    finally:
        _docker("network", "rm", name)


def _wait_serving(name: str) -> None:
    for _ in range(600):
        if "serving" in _docker("logs", name):
            return
        time.sleep(0.1)
    raise AssertionError(f"the stand-in did not start: {_docker('logs', name)}")
