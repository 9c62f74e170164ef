"""A Redis server of one xdist worker's own: the suite's fixed databases (tests/conftest.py
`redis_db_url`) are flushed by every test that uses them, so two workers must never share one.

A server per worker, rather than a range of databases per worker: a server has 16 databases,
and the workers are not bounded by that."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import time
from pathlib import Path

import redis

from tests.support.ports import free_port

# The shell lives as long as the server, and ends it when its stdin closes, that is when the
# worker that started it ends, however it ends (a SIGKILL included): no server outlives its
# worker. (A background job's stdin is /dev/null unless redirected, hence fd 3.)
_WATCH = (
    'exec 3<&0; redis-server "$@" </dev/null 3<&- & server=$!; '
    '{ read -r _ <&3; kill "$server"; } & wait "$server"'
)


def start_private_redis() -> int:
    """Start a Redis server on a free loopback port, stopped when this process ends; its port."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not on PATH; `make bootstrap` installs it")
    for _ in range(5):  # a free port can be taken between the probe and the bind
        port = free_port()
        args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        proc = subprocess.Popen(
            ["sh", "-c", _WATCH, "sh", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        if _answers(port, proc):
            atexit.register(_stop, proc)
            return port
        _stop(proc)
    raise RuntimeError("could not start a private redis-server for this test worker")


def _answers(port: int, proc: subprocess.Popen[bytes], timeout: float = 20) -> bool:
    """The server `proc` started answers on `port` (not another one that took the port)."""
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            return _parent(int(client.info("server")["process_id"])) == proc.pid
        except redis.ConnectionError:
            time.sleep(0.05)
    return False


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
