"""`resolver worker --nice N`: every thread of the worker runs N steps lower in CPU priority, so
that the Procfile's jobs worker leaves the CPU to the callbacks worker's 👀."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import ResolverEnv
from tests.support import procs


def niceness(pid: int) -> set[int]:
    """The nice value of each of the process's threads (field 19 of their stat)."""
    values = set()
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        fields = stat.read_text().rsplit(")", 1)[1].split()
        values.add(int(fields[16]))
    return values


def test_every_thread_of_a_worker_started_nicer_runs_at_that_niceness(
    resolver_env: ResolverEnv,
) -> None:
    log = resolver_env.tmp / "worker-nice.log"
    args = ["--queues", "default", "--concurrency", "3", "--pool", "threads", "--nice", "7"]
    worker = procs.start(resolver_env.child_env(), log, "-m", "resolver.cli", "worker", *args)
    try:
        procs.wait_until(lambda: "ready." in log.read_text(), 60, "the worker")
        assert niceness(worker.pid) == {min(19, os.getpriority(os.PRIO_PROCESS, 0) + 7)}
    finally:
        procs.kill(worker)
