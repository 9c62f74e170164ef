"""Starting and killing real Celery processes for tests."""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support import zygote

ROOT = Path(__file__).resolve().parents[2]


def start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """A process in its own group, so a kill takes every child with it.

    `-m celery …` and `-m resolver.cli …` are forked from a warm parent that has imported
    their modules once (tests/support/zygote.py); RESOLVER_TEST_FORK_SERVER=0 starts every
    process afresh."""
    env = {**env, "PYTHONPATH": str(ROOT)}
    cwd = env.get("PWD_FOR_TEST", os.getcwd())
    if _forkable(args):
        return _zygote().start(env, log, cwd, args[1], args[2:])
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=cwd,
        )


def run(
    env: dict[str, str], *args: str, stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run([python, *ARGS], input=stdin, capture_output=True, text=True)`, in the
    working directory, forked from the warm parent as `start` does where it can: a command
    line test pays for its command, not for importing Resolver again each time."""
    if not _forkable(args):
        return subprocess.run(
            [sys.executable, *args], env={**env, "PYTHONPATH": str(ROOT)}, input=stdin,
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="resolver-run-") as tmp:
        streams = {name: os.path.join(tmp, name) for name in ("stdin", "stdout", "stderr")}
        Path(streams["stdin"]).write_text(stdin)
        env = {**env, "PYTHONPATH": str(ROOT)}
        forked = _zygote().start(
            env, Path(streams["stderr"]), os.getcwd(), args[1], args[2:], streams
        )
        try:
            code = forked.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(forked.pid, signal.SIGKILL)
            forked.wait()
            raise
        out, err = (Path(streams[name]).read_text() for name in ("stdout", "stderr"))
    return subprocess.CompletedProcess([sys.executable, *args], code, out, err)


def _forkable(args: tuple[str, ...]) -> bool:
    if os.environ.get("RESOLVER_TEST_FORK_SERVER", "1") == "0":
        return False
    return len(args) >= 2 and args[0] == "-m" and args[1] in zygote.RUNS


class Forked(subprocess.Popen[bytes]):
    """A process the zygote forked, as the Popen the callers know: its pid (the leader of its
    own session and group), `poll`, `wait` (on a pidfd) and signals. Its exit code comes from
    the zygote, its parent."""

    def __init__(self, pid: int, args: list[str], server: Zygote) -> None:  # no super(): no exec
        self.args = args
        self.pid = pid
        self.returncode = None
        self.stdin = self.stdout = self.stderr = None
        self._child_created = False  # Popen.__del__ has nothing to reap
        self._server = server
        self._pidfd = os.pidfd_open(pid)

    def poll(self) -> int | None:
        return self._ended(0.0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._ended(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def _ended(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            readable, _, _ = select.select([self._pidfd], [], [], timeout)
            if readable:
                self.returncode = self._server.status(self.pid)
                os.close(self._pidfd)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def __del__(self) -> None:
        if self.returncode is None:
            os.close(self._pidfd)


class Zygote:
    """The session's warm parent (tests/support/zygote.py), started on first use."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="resolver-zygote-")
        self._path = os.path.join(self._dir, "socket")
        # Nothing of a test's environment: the imports must not depend on it.
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESOLVER_")}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.zygote", self._path],
            env={**env, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        assert self._proc.stdout is not None
        said = b""
        for line in self._proc.stdout:  # what it prints while importing, then "ready"
            if line == b"ready\n":
                break
            said += line
        else:
            raise RuntimeError(f"the zygote did not start ({self._proc.wait()}): {said!r}")
        self._lock = threading.Lock()

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self._path)
            conn.sendall((json.dumps(request) + "\n").encode())
            answer: dict[str, Any] = json.loads(conn.makefile("r").readline())
            return answer

    def start(
        self,
        env: dict[str, str],
        log: Path,
        cwd: str,
        module: str,
        args: tuple[str, ...],
        streams: dict[str, str] | None = None,
    ) -> Forked:
        """Fork `python -m MODULE ARGS`; `streams` may name files for its "stdin", "stdout" and
        "stderr" (by default nothing in, and both outputs to `log`)."""
        request = {
            "env": env, "log": str(log), "cwd": cwd, "module": module, "args": args,
            **(streams or {}),
        }  # fmt: skip
        pid = int(self._ask({"start": request})["pid"])
        return Forked(pid, [sys.executable, "-m", module, *args], self)

    def status(self, pid: int) -> int:
        return int(self._ask({"status": pid})["code"])

    def close(self) -> None:
        self._proc.kill()
        self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        shutil.rmtree(self._dir, ignore_errors=True)


_started: list[Zygote] = []
_starting = threading.Lock()


def _zygote() -> Zygote:
    with _starting:
        if not _started:
            _started.append(Zygote())
            atexit.register(_started[0].close)
        return _started[0]


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
