"""Running Alembic migrations from code (`resolver db upgrade`, tests, bootstrap)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

from alembic import command
from alembic.config import Config

if TYPE_CHECKING:
    from sqlalchemy import Connection, RowMapping

MIGRATIONS = Path(__file__).parent / "migrations"
REWRITE_BATCH: Final = 500
"""Rows a data migration rewrites per transaction: SQLite's write lock is held for one batch
(well under a second), so a webhook meanwhile waits that long, never the whole table."""


class MigrationRefused(Exception):
    """A migration found data it cannot carry over; the message names it and the fix."""


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # ConfigParser interpolation would choke on a '%' in a password.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` to `revision`."""
    command.upgrade(alembic_config(url), revision)


def schema_state(url: str) -> tuple[str | None, str | None, bool]:
    """The database's revision, the code's head revision, and whether the jobs table exists.
    Raises whatever connecting raises."""
    from sqlalchemy import inspect, text

    from resolver.store.db import engine_for

    with engine_for(url).connect() as conn:
        conn.execute(text("SELECT 1"))
        current = schema_revision(conn)
        has_jobs = inspect(conn).has_table("jobs")
    return current, code_revision(), has_jobs


def schema_revision(conn: Connection) -> str | None:
    """The revision the database's schema is at (None: never migrated)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


@cache
def code_revision() -> str | None:
    """The newest migration of this code, read once from its scripts."""
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config).get_current_head()


def rewrite_in_batches(
    table: str,
    column: str,
    rewrite: Callable[[RowMapping], object | None],
    reading: tuple[str, ...] = (),
) -> None:
    """In a migration: set the JSON `column` of each row of `table` to what `rewrite` makes of
    the row (its id, `column` and the columns `reading`; None leaves the row as it is), by id,
    committing each batch. An upgrade stopped mid-way runs the migration again from its start,
    so `rewrite` gives None for a row it already rewrote, and the migration changes no schema
    (the first batch's commit would keep a half of it, without the revision's stamp)."""
    import sqlalchemy as sa
    from alembic import op

    rows = sa.table(
        table,
        sa.column("id", sa.Integer),
        sa.column(column, sa.JSON),
        *(sa.column(name, sa.String) for name in reading),
    )
    change = (
        sa.update(rows)
        .where(rows.c.id == sa.bindparam("row_id"))
        .values({column: sa.bindparam("new_value", type_=sa.JSON)})
    )
    bind, last = op.get_bind(), 0
    query = sa.select(*rows.c).order_by(rows.c.id).limit(REWRITE_BATCH)
    while batch := bind.execute(query.where(rows.c.id > last)).mappings().all():
        changed = [
            {"row_id": row["id"], "new_value": new}
            for row in batch
            if isinstance(row[column], dict) and (new := rewrite(row)) is not None
        ]
        if changed:
            bind.execute(change, changed)
        # Committed here, not with the migration: its transaction would hold SQLite's write
        # lock (PostgreSQL's row locks) over the whole table, and a webhook waiting for it
        # past its busy timeout is lost.
        with op.get_context().autocommit_block():
            pass
        last = batch[-1]["id"]
