"""Retention under intake (issue 37): the ingress's latency at a fixed rate while the retention
duty prunes a large database's old trajectories, beside the same rate with nothing pruning.

    uv run --frozen python bench/retention.py [--jobs 10000] [--steps 20] [--rate 200]
                                              [--duration 10] [--postgres] [--redis URL]

bench/ingress.py's server (one uvicorn process, the real `POST /webhooks/github`, which creates
and publishes a job per request) on a database holding `--jobs` finished jobs of `--steps`
trajectory entries each, all older than the retention. First the open-loop fixed rate alone;
then the same rate while another process runs the beat duty's work (resolver.tasks.prune_all:
200 jobs per transaction) until every old trajectory is gone. Prints p50/p99 of both, and how
long the pruning took. Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import ingress
from _load import Figures, fixed_rate, free_port, wait_until_answering

PRUNE = "from resolver import tasks; print(tasks.prune_all(30, tasks.RETENTION_BATCH, 3600.0))"


def fill(url: str, jobs: int, steps: int) -> None:
    """`jobs` succeeded jobs 60 days old, each with `steps` trajectory entries."""
    from sqlalchemy import func, insert, select

    from resolver.store.db import engine_for
    from resolver.store.models import Job, JobEvent

    old = datetime.now(UTC) - timedelta(days=60)
    out = {"command": "python3 -m unittest -q", "output": "." * 400, "exit": 0}
    engine = engine_for(url)
    with engine.begin() as conn:
        first = (conn.scalar(select(func.max(Job.id))) or 0) + 1
    for start in range(0, jobs, 500):
        ids = range(first + start, first + min(start + 500, jobs))
        rows = [
            {"id": i, "source": "github", "task": "fix it", "repo": "bench/old",
             "state": "succeeded", "outcome": "changed_code", "cost_usd": 0.05, "trigger": {},
             "result": {"steps": steps},
             "created_at": old, "updated_at": old, "finished_at": old}
            for i in ids
        ]  # fmt: skip
        events = [
            {"job_id": i, "seq": s, "kind": "tool", "payload": out, "created_at": old}
            for i in ids
            for s in range(1, steps + 1)
        ]
        with engine.begin() as conn:
            conn.execute(insert(Job), rows)
            conn.execute(insert(JobEvent), events)


def row(label: str, f: Figures) -> str:
    return f"{label:34}{f.requests_per_second:7.0f}{f.p50:7.1f}{f.p99:7.1f}{f.errors:>8}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10000, help="old finished jobs")
    parser.add_argument("--steps", type=int, default=20, help="trajectory entries per job")
    parser.add_argument("--rate", type=float, default=200.0, help="requests/s")
    parser.add_argument("--duration", type=int, default=10, help="seconds per measurement")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    parser.add_argument("--redis", default=ingress.REDIS, help="a Redis db the run may flush")
    args = parser.parse_args()
    ingress.REDIS = args.redis
    tmp = Path(tempfile.mkdtemp(prefix="bench-retention-"))
    try:
        with ingress.database(tmp, args.postgres) as url:
            measure(args, tmp, url)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(args: argparse.Namespace, tmp: Path, url: str) -> None:
    import redis

    env = ingress.bench_env(url)
    redis.Redis.from_url(args.redis).flushdb()
    signed = ingress.prepare(env, 50)
    started = time.monotonic()
    fill(url, args.jobs, args.steps)
    print(f"filled {args.jobs} jobs of {args.steps} entries in {time.monotonic() - started:.0f} s")
    port = free_port()
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, ingress.__file__, "--serve", str(port), "--workers", "1"],
        env=env, stderr=log, stdout=log,
    )  # fmt: skip
    path = ingress.ENDPOINTS["ingress"]
    try:
        wait_until_answering("the server", port, "/healthz", server, tmp / "server.log")
        quiet = fixed_rate(server.pid, port, path, signed, args.rate, args.duration)
        pruning_started = time.monotonic()
        pruner = subprocess.Popen(
            [sys.executable, "-c", PRUNE], env={**env, "PYTHONPATH": str(ingress.ROOT)},
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        busy = fixed_rate(server.pid, port, path, signed, args.rate, args.duration)
        pruned = (pruner.communicate(timeout=3600)[0] or "0").strip().splitlines()[-1]
        took = time.monotonic() - pruning_started
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()
        redis.Redis.from_url(args.redis).flushdb()
    kind = "PostgreSQL" if args.postgres else "SQLite"
    print(f"\ningress at {args.rate:.0f} req/s, {kind}{'':14}req/s    p50    p99 non-2xx")
    print(row("nothing pruning", quiet))
    print(row("while retention prunes", busy))
    print(f"pruned {pruned} jobs ({args.steps} entries each) in {took:.1f} s, 200 a transaction")
    print(f"this machine: load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
