"""Running Alembic migrations from code (`resolver db upgrade`, tests, bootstrap)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

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
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from sqlalchemy import inspect, text

    from resolver.store.db import engine_for

    with engine_for(url).connect() as conn:
        conn.execute(text("SELECT 1"))
        current = MigrationContext.configure(conn).get_current_revision()
        has_jobs = inspect(conn).has_table("jobs")
    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    return current, head, has_jobs
