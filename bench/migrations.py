"""What `resolver db upgrade` costs on a large database (issue 37): the migrations after a
release, timed per million rows.

    uv run --frozen python bench/migrations.py [--rows 1000000] [--since 0015] [--postgres]

Migrates a fresh database (SQLite, or `--postgres`: a database of its own on the project's
PostgreSQL) to `--since` (the previous release's last migration: v0.1.0 ended at 0015), fills
it through that schema (tables reflected, not today's models) with `--rows` finished jobs,
each with a trigger like a forge mention's, a two-entry trajectory, a delivery and its 👀 and
status callbacks (payloads of the shape before 0018), then times
the upgrade to head, one migration at a time. Prints each migration's seconds, the total and
the seconds per million jobs, and the longest a writer waited for the database meanwhile: a
probe beside the upgrade takes the write lock every 50 ms as a webhook's intake would (SQLite's
write lock; PostgreSQL's lock on the jobs, deliveries and callbacks tables) and lets it go.
Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import ingress

BATCH = 5000


def fill(url: str, rows: int) -> None:
    from sqlalchemy import MetaData, insert

    from resolver.store.db import engine_for

    engine = engine_for(url)
    tables = MetaData()
    names = ("jobs", "job_events", "deliveries", "callbacks")
    tables.reflect(engine, only=names)
    jobs, events, deliveries, callbacks = (tables.tables[n] for n in names)
    now = datetime.now(UTC)
    for start in range(1, rows + 1, BATCH):
        ids = range(start, min(start + BATCH, rows + 1))
        trigger = {
            "forge": "github", "repo": "o/r", "number": 7, "comment_id": 1234567,
            "url": "https://github.com/o/r/issues/7#issuecomment-1234567",
            "sender": {"id": 583231, "login": "ada"}, "installation_id": 42,
        }  # fmt: skip
        with engine.begin() as conn:
            conn.execute(
                insert(jobs),
                [
                    {"id": i, "source": "github", "trigger": trigger, "repo": "o/r",
                     "task": "fix the flaky export test", "state": "succeeded",
                     "outcome": "changed_code", "result": {"summary": "done", "steps": 6},
                     "cost_usd": 0.05, "prompt_tokens": 9000, "completion_tokens": 700,
                     "attempts": 1, "cancel_requested": False, "created_at": now,
                     "updated_at": now, "conversation_key": f"github:o/r#{i}"}
                    for i in ids
                ],
            )  # fmt: skip
            conn.execute(
                insert(events),
                [
                    {"job_id": i, "seq": s, "kind": "tool", "created_at": now,
                     "payload": {"command": "python3 -m unittest -q", "output": "OK"}}
                    for i in ids
                    for s in (1, 2)
                ],
            )  # fmt: skip
            conn.execute(
                insert(deliveries),
                [
                    {"provider": "github", "delivery_key": f"hook:{i}", "event": "issue_comment",
                     "received_at": now, "outcome": "created", "job_id": i}
                    for i in ids
                ],
            )  # fmt: skip
            conn.execute(
                insert(callbacks),
                [
                    {"job_id": i, "provider": "github", "action": action, "payload": {"job_id": i},
                     "state": "sent", "result": {}, "created_at": now}
                    for i in ids
                    for action in ("react", "status")
                ],
            )  # fmt: skip
    engine.dispose()


class LockProbe:
    """A writer beside the upgrade: every 50 ms it takes the lock a webhook's intake takes, and
    lets it go; `longest` is the longest it waited."""

    def __init__(self, url: str) -> None:
        self.url, self.longest, self.stop = url, 0.0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self) -> LockProbe:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def run(self) -> None:
        if self.url.startswith("sqlite"):
            import sqlite3

            path = self.url.split("///", 1)[1]
            conn = sqlite3.connect(path, timeout=600, isolation_level=None)
            take = "BEGIN IMMEDIATE"
        else:
            import psycopg

            conn = psycopg.connect(self.url.replace("postgresql+psycopg://", "postgresql://"))
            take = "LOCK TABLE jobs, deliveries, callbacks IN ROW EXCLUSIVE MODE"
        while not self.stop.wait(0.05):
            started = time.monotonic()
            conn.execute(take)
            self.longest = max(self.longest, time.monotonic() - started)
            conn.execute("ROLLBACK") if self.url.startswith("sqlite") else conn.rollback()
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="jobs in the database")
    parser.add_argument("--since", default="0015", help="the previous release's last migration")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    args = parser.parse_args()
    from alembic.script import ScriptDirectory

    from resolver.store.migrate import alembic_config, upgrade

    tmp = Path(tempfile.mkdtemp(prefix="bench-migrations-"))
    try:
        with ingress.database(tmp, args.postgres) as url:
            upgrade(url, args.since)
            started = time.monotonic()
            fill(url, args.rows)
            filled = time.monotonic() - started
            scripts = ScriptDirectory.from_config(alembic_config(url))
            ran = [r.revision for r in scripts.iterate_revisions("head", args.since)]
            times = []
            with LockProbe(url) as probe:
                for revision in reversed(ran):
                    started = time.monotonic()
                    upgrade(url, revision)
                    times.append((revision, time.monotonic() - started))
            took = sum(seconds for _, seconds in times)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    kind = "PostgreSQL" if args.postgres else "SQLite"
    print(f"{kind}: {args.rows:,} jobs (with 2 trajectory entries, a delivery, 2 callbacks each), "
          f"filled in {filled:.0f} s")  # fmt: skip
    print(f"migrations after {args.since}: {', '.join(reversed(ran)) or 'none'}")
    print("  " + ", ".join(f"{revision} {seconds:.2f} s" for revision, seconds in times))
    per_million = took * 1_000_000 / max(args.rows, 1)
    print(f"upgrade to head: {took:.2f} s, {per_million:.1f} s per million jobs")
    print(f"longest wait of a writer for the lock meanwhile: {probe.longest:.2f} s")


if __name__ == "__main__":
    main()
