"""Running Alembic migrations from code (`resolver db upgrade`, tests, bootstrap)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config

if TYPE_CHECKING:
    from sqlalchemy import Connection

MIGRATIONS = Path(__file__).parent / "migrations"


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
