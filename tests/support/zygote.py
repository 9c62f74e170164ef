"""A warm parent for the service's processes in tests: imports Resolver once, then forks.

A Celery worker or beat (or `resolver worker`/`serve`) spends most of its start-up importing
litellm, SQLAlchemy and Celery; the end-to-end suite starts one or more per test. This server
imports those modules once per test session, with nothing of any test's environment, and
starts each process as a fork of itself: the child takes the test's environment, directory and
log (or files for its standard input, output and error), calls `setsid` like
`start_new_session=True`, and runs `python -m MODULE ARGS` in place.
Imports never read settings (resolver.broker.celery_app builds its app on first use), so what
runs is the real process, only without the repeated import.

It forks from one thread only (it checks), and each request is answered before the next:
`{"start": {...}}` → `{"pid": N}`; `{"status": N}` → `{"code": C}` once the process has ended
(the client waits on a pidfd first), with C as `Popen.returncode` gives it. It exits when the
test session that started it is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import runpy
import socket
import sys
import threading
import traceback
from typing import Any

# What the processes import before they read anything of their environment.
PRELOAD = (
    "resolver.tasks",
    "resolver.cli",
    "resolver.cli.services",  # `resolver serve`, `worker`, `beat`: imported when one runs
    "resolver.app",
    # The agent loop (litellm, the Docker client): a job's first run in a worker imports it, 3 to
    # 5 s of CPU in every worker process of every end-to-end test (a prefork worker's each child).
    "resolver.runners",
    "celery.bin.celery",
    "celery.apps.worker",
    "celery.apps.beat",
    "celery.concurrency.prefork",
    "celery.concurrency.thread",
    "kombu.transport.redis",
    "uvicorn",
)
# The modules a request may run.
RUNS = ("celery", "resolver.cli")


def _preload() -> None:
    # The same default resolver.agent.llm sets, before litellm is first imported.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name in PRELOAD:
        __import__(name)
    if threading.active_count() != 1:
        raise SystemExit(f"zygote: threads after preload: {threading.enumerate()}")


def _code(pid: int) -> int:
    """Reap an ended child. Only when asked, as Popen does: until then its pid is not reused,
    so a test's late kill of a process group never reaches another."""
    _pid, status = os.waitpid(pid, 0)  # the client saw it end: this does not block long
    return os.waitstatus_to_exitcode(status)


def serve(path: str) -> dict[str, Any]:
    """Answer requests until one forks, and return that request in the child. The server
    itself ends when it is killed or when the test session that started it is gone."""
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    listener.settimeout(1.0)
    print("ready", flush=True)
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the session was killed: nothing will clean up
                os.unlink(path)
                os.rmdir(os.path.dirname(path))
                raise SystemExit(0) from None
            continue
        conn.settimeout(None)
        with conn:
            request = json.loads(conn.makefile("r").readline())
            if "status" in request:
                answer: dict[str, Any] = {"code": _code(int(request["status"]))}
            else:
                started, told = os.pipe()
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    conn.close()
                    os.close(started)
                    become(request["start"])
                    os.write(told, b".")  # the caller may now signal its group, read its log
                    os.close(told)
                    return dict(request["start"])
                os.close(told)
                os.read(started, 1)  # nothing when the child died setting itself up
                os.close(started)
                answer = {"pid": pid}
            conn.sendall((json.dumps(answer) + "\n").encode())


def become(request: dict[str, Any]) -> None:
    """In the forked child: the test's process, as `Popen(start_new_session=True)` makes it."""
    os.setsid()  # signal handlers stay as Python set them at start-up: the zygote's own
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    stdin = os.open(request.get("stdin") or os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    for fd, path in ((1, request.get("stdout")), (2, request.get("stderr"))):
        out = os.open(path or request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(out, fd)
        os.close(out)
    # As `python -m` sets it: the working directory first on the path.
    sys.path[0] = os.getcwd()
    from resolver.core.settings import get_settings

    get_settings.cache_clear()


def main() -> None:
    path = sys.argv[1]
    _preload()
    request = serve(path)
    module, args = request["module"], list(request["args"])
    if module not in RUNS:
        raise SystemExit(f"zygote: will not run {module}")
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except BaseException:
        traceback.print_exc()
        code = 1
    end(code)


def _exit_code(code: object) -> int:
    """What the interpreter exits with for `SystemExit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def end(code: int) -> None:
    """End as the interpreter would (wait for the threads that are not daemons, run the atexit
    handlers, flush), but without tearing down the heap the zygote imported: in a fork, freeing
    every object writes to every page it shares with the zygote, 2 s for `resolver --version`."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
