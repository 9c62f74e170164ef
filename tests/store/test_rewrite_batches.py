"""A data migration (0016's rewrite of every job's trigger) commits each batch of rows: a writer
gets in between two batches (SQLite's write lock, PostgreSQL's row locks are let go), and an
upgrade stopped after a batch keeps it, stays at the revision before, and run again rewrites
every row."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, event, insert, select

from resolver.store.db import engine_for
from resolver.store.migrate import REWRITE_BATCH, code_revision, schema_revision, upgrade
from resolver.store.models import Job
from tests.store.test_typed_triggers import GITHUB
from tests.store.test_user_names import empty_database  # noqa: F401 (a fixture)

ROWS = REWRITE_BATCH + 20


class Stopped(Exception):
    """The upgrade, stopped between two batches as a killed process stops."""


@contextmanager
def between_batches(act: Callable[[], None]) -> Iterator[None]:
    """`act` runs in the upgrade, after its first batch of jobs and before the second: when it
    reads the next batch."""
    reads = 0

    def before(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        nonlocal reads
        if statement.startswith("SELECT") and "FROM jobs" in statement and "jobs.id >" in statement:
            reads += 1
            if reads == 2:
                act()

    event.listen(Engine, "before_cursor_execute", before)
    try:
        yield
    finally:
        event.remove(Engine, "before_cursor_execute", before)


def test_a_writer_gets_in_between_two_batches(empty_database: str) -> None:  # noqa: F811
    url = _old_jobs(empty_database)
    wrote: list[str] = []
    with between_batches(lambda: wrote.append(_write_the_first_job(url))):
        upgrade(url)
    assert wrote == ["written"]
    assert _tasks_and_kinds(url)[0] == ("written meanwhile", "forge_issue")


def test_an_upgrade_stopped_between_batches_keeps_them_and_finishes_when_run_again(
    empty_database: str,  # noqa: F811
) -> None:
    url = _old_jobs(empty_database)

    def stop() -> None:
        raise Stopped

    with between_batches(stop), pytest.raises(Stopped):
        upgrade(url)
    kinds = [kind for _, kind in _tasks_and_kinds(url)]
    assert kinds == ["forge_issue"] * REWRITE_BATCH + [None] * (ROWS - REWRITE_BATCH)
    with engine_for(url).connect() as conn:
        assert schema_revision(conn) == "0015"

    upgrade(url)
    assert [kind for _, kind in _tasks_and_kinds(url)] == ["forge_issue"] * ROWS
    with engine_for(url).connect() as conn:
        assert schema_revision(conn) == code_revision()


def _old_jobs(url: str) -> str:
    """The database at `url` at 0015, with ROWS jobs whose triggers have the older flat shape."""
    upgrade(url, "0015")
    with engine_for(url).begin() as conn:
        conn.execute(
            insert(Job.__table__),
            [{"source": "github", "task": "t", "trigger": GITHUB} for _ in range(ROWS)],
        )
    return url


def _write_the_first_job(url: str) -> str:
    """Writes the first job (rewritten in the first batch) from a connection of its own, with a
    short wait for the lock; says whether it could."""
    change = "UPDATE jobs SET task = 'written meanwhile' WHERE id = 1"
    try:
        if url.startswith("sqlite"):
            with sqlite3.connect(url.split("///", 1)[1], timeout=0.5) as sqlite:
                sqlite.execute(change)
            sqlite.close()
        else:
            plain = url.replace("postgresql+psycopg://", "postgresql://")
            with psycopg.connect(plain) as conn:
                conn.execute("SET lock_timeout = '500ms'")
                conn.execute(change)
    except (sqlite3.OperationalError, psycopg.errors.LockNotAvailable) as locked:
        return f"locked: {locked}"
    return "written"


def _tasks_and_kinds(url: str) -> list[tuple[str, str | None]]:
    table = Job.__table__
    with engine_for(url).connect() as conn:
        rows = conn.execute(select(table.c.task, table.c.trigger).order_by(table.c.id))
        return [(task, trigger.get("kind")) for task, trigger in rows]
