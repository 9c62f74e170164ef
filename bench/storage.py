"""Bytes per job, in the database and in the logs (issue 37), and a year at 1,000 jobs a day.

Two kinds of job, one after the other through one whole service (bench/_rig.py: the
Procfile's processes on a SQLite file, the GitHub stand-in, the git server, the scripted model,
real sandboxes): the demo's job (`make demo`'s plan: think, run the tests, view, edit, run the
tests, finish) and a 40-step job (the fix, 38 different commands reading the repository or
running its tests, finish). Each mention ends in a draft pull request.

Per job: the database's growth (the bytes in use in the SQLite file after a WAL checkpoint, by
table with its indexes, from SQLite's dbstat; a PostgreSQL row takes some more), the
trajectory's share of it (`job_events`, what
RESOLVER_RETENTION_DAYS prunes), and the growth of every process's log. Then a year at 1,000
jobs a day, kept whole and with 30 days of trajectories.

    uv run --frozen python bench/storage.py [--jobs 5] [--steps 40] [--redis URL]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/_rig, bench/load

import _rig
from _rig import Rig, procfile

from tests.e2e.stack import by_step
from tests.support.llm_server import Reply, finish, tool

MB = 1000 * 1000
PER_DAY = 1000
KEEP_DAYS = 30


@dataclass(frozen=True)
class Growth:
    name: str
    jobs: int
    steps: int
    database: float  # bytes per job
    trajectory: float  # of which job_events
    logs: float
    tables: dict[str, float]


def demo_replies() -> list[Reply]:
    from demo.llm_standin import PLAN

    replies = []
    for name, arguments in PLAN:
        if name == "finish":
            replies.append(finish(str(arguments["outcome"]), str(arguments["summary"])))
        else:
            replies.append(tool(name, **arguments))
    return replies


USED = """
SELECT m.tbl_name, SUM(d.pgsize - d.unused) FROM dbstat AS d
JOIN sqlite_master AS m ON m.name = d.name GROUP BY m.tbl_name
"""


LOOKS = (
    "python3 -m unittest -q 2>&1 | tail -n 3",
    "cat calc.py",
    "ls -la",
    "grep -n 'def ' *.py",
    "git log --oneline | head -n 5",
)


def long_replies(steps: int) -> list[Reply]:
    """The fix, then `steps - 2` different looks at the repository (the stuck detector ends a
    run of identical ones), then finish."""
    from _rig import script

    fix, *_, done = script(3)
    looks = [
        tool("execute_bash", command=f"{LOOKS[n % len(LOOKS)]}; echo look {n}")
        for n in range(steps - 2)
    ]
    return [fix, *looks, done]


def database_bytes(path: Path) -> dict[str, int]:
    """Bytes in use per table, its indexes included (free space in pages left out, so one job
    shows its own bytes rather than whole pages)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute(USED).fetchall()
    return {str(name): int(size) for name, size in rows}


def log_bytes(made: Rig) -> int:
    return sum(p.stat().st_size for p in made.tmp.glob("*.log"))


QUIET = 0.5
"""Seconds without a new log line that count as the service being done."""


def quiet(made: Rig, what: str, timeout: float = 30) -> None:
    """Wait until no callback is pending and no process has written to its log for `QUIET`
    seconds: the service has nothing left to do (at most `timeout` seconds)."""
    from sqlalchemy import func, select

    from resolver.store.db import session_scope
    from resolver.store.models import Callback

    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        made.check_alive()
        with session_scope() as session:
            pending = session.scalar(
                select(func.count(Callback.id)).where(Callback.state == "pending")
            )
        size = log_bytes(made)
        if size != last or pending:
            last, since = size, time.monotonic()
        elif time.monotonic() - since >= QUIET:
            return
        time.sleep(0.1)
    raise SystemExit(f"{what}: the service was still busy after {timeout:g} s\n{made.logs()}")


def measure(made: Rig, name: str, senders: range, steps: int, replies: list[Reply]) -> Growth:
    """The growth while `senders` each mention the bot once, the model answering `replies`."""
    from load import post_all, settled

    jobs = len(senders)
    print(f"\n{name}: {jobs} job(s) of {steps} steps", flush=True)
    made.llm.set_script(by_step(replies))
    path = Path(made.database_url.split("///", 1)[1])
    quiet(made, name)  # start-up's log lines, or the last job's, are not this job's
    tables0, logs0 = database_bytes(path), log_bytes(made)
    posted = post_all(made, senders)
    deadline = time.monotonic() + 300 + 10 * steps * jobs
    while not settled(made, posted):
        made.check_alive()
        if time.monotonic() > deadline:
            raise SystemExit(f"{name}: timed out\n{made.logs()}")
        time.sleep(0.5)
    quiet(made, name)  # the last callbacks: status edits, the reply
    tables1, logs1 = database_bytes(path), log_bytes(made)
    tables = {t: (tables1.get(t, 0) - tables0.get(t, 0)) / jobs for t in tables1}
    return Growth(
        name,
        jobs,
        steps,
        sum(tables.values()),
        tables.get("job_events", 0.0),
        (logs1 - logs0) / jobs,
        {t: b for t, b in sorted(tables.items(), key=lambda kv: -kv[1]) if b > 0},
    )


def kb(value: float) -> str:
    return f"{value / 1000:8.1f} kB"


def table(results: list[Growth]) -> None:
    print("\nbytes per job (database: bytes in use, indexes included; logs: every process)")
    print(f"{'job':<16}{'steps':>6}{'database':>13}{'trajectory':>13}{'logs':>13}")
    for g in results:
        row = f"{g.name:<16}{g.steps:>6}{kb(g.database):>13}{kb(g.trajectory):>13}"
        print(row + f"{kb(g.logs):>13}")
    for g in results:
        top = ", ".join(f"{t} {b / 1000:.1f} kB" for t, b in list(g.tables.items())[:5])
        print(f"  {g.name} by table: {top}")
    print(f"\na year at {PER_DAY:,} jobs a day ({PER_DAY * 365:,} jobs)")
    print(
        f"{'job':<16}{'database, all kept':>20}{f'{KEEP_DAYS} d of trajectories':>24}{'logs':>12}"
    )
    for g in results:
        whole = g.database * PER_DAY * 365
        pruned = (g.database - g.trajectory) * PER_DAY * 365 + g.trajectory * PER_DAY * KEEP_DAYS
        logs = g.logs * PER_DAY * 365
        print(f"{g.name:<16}{whole / MB:>17.0f} MB{pruned / MB:>21.0f} MB{logs / MB:>9.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=5, help="jobs of each kind")
    parser.add_argument("--steps", type=int, default=40, help="steps of the long job")
    parser.add_argument("--redis", default=_rig.REDIS, help="a Redis db the run may flush")
    args = parser.parse_args()
    _rig.REDIS = args.redis
    # One service for both kinds (a start of the whole Procfile costs seconds): the first
    # `--jobs` senders make demo jobs, the next as many the long ones.
    with Rig(procfile(), 2 * args.jobs, 0.0, args.steps, False, demo_replies()) as made:
        results = [
            measure(made, "demo job", range(args.jobs), 6, demo_replies()),
            measure(
                made,
                f"{args.steps}-step job",
                range(args.jobs, 2 * args.jobs),
                args.steps,
                long_replies(args.steps),
            ),
        ]
    table(results)


if __name__ == "__main__":
    main()
