"""Starting and killing real Celery processes for tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """A process in its own group, so a kill takes every child with it."""
    env = {**env, "PYTHONPATH": str(ROOT)}
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=env.get("PWD_FOR_TEST", os.getcwd()),
        )


def start_worker(
    env: dict[str, str],
    log: Path,
    name: str,
    concurrency: int = 1,
    pool: str = "prefork",
    queues: str = "jobs,callbacks,default",
) -> subprocess.Popen[bytes]:
    return start(
        env,
        log,
        "-m",
        "celery",
        "-A",
        "tests.support.worker_app",
        "worker",
        "-Q",
        queues,
        "-c",
        str(concurrency),
        "-P",
        pool,
        "-n",
        f"{name}@%h",
        "--without-mingle",
        "--without-gossip",
        "--loglevel",
        "INFO",
    )


def start_beat(env: dict[str, str], log: Path, schedule: Path) -> subprocess.Popen[bytes]:
    return start(
        env,
        log,
        "-m",
        "celery",
        "-A",
        "tests.support.worker_app",
        "beat",
        "-s",
        str(schedule),
        "--pidfile=",
        "--loglevel",
        "INFO",
    )


def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    proc.wait(timeout=30)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Warm shutdown, then force."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        kill(proc)
    except ProcessLookupError:
        pass


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll `check`; return the seconds it took, or fail naming `what`."""
    start_at = time.monotonic()
    while not check():
        if time.monotonic() - start_at > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)
    return time.monotonic() - start_at


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
