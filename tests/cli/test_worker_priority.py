"""A worker that runs only jobs gives way on the CPU to the callbacks worker, so 48 jobs
starting at once do not hold back the 👀 (issue #36); the callbacks worker keeps its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from resolver.cli.services import JOBS_NICENESS
from tests.support import procs


def niceness(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])  # field 19, counted after the name


@pytest.mark.parametrize(("queues", "lowered"), [("jobs", True), ("callbacks,default", False)])
def test_only_a_jobs_worker_lowers_its_priority(resolver_env, queues: str, lowered: bool) -> None:
    log = resolver_env.tmp / f"worker-{queues}.log"
    env = resolver_env.child_env(PWD_FOR_TEST=str(resolver_env.tmp))
    args = ("-m", "resolver.cli", "worker", "--queues", queues, "--concurrency", "1")
    proc = procs.start(env, log, *args)
    try:
        procs.wait_until(lambda: b"ready" in log.read_bytes(), 60, "the worker")
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert niceness(proc.pid) == ours + (JOBS_NICENESS if lowered else 0)
    finally:
        procs.kill(proc)
