"""The migrations create exactly the tables the models describe, on both databases."""

import warnings

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from resolver.store.db import engine_for
from resolver.store.models import Base

# SQLite cannot reflect an index on an expression, so autogenerate skips comparing one there
# (PostgreSQL compares it); the test below reads that index from SQLite's own catalogue.
EXPRESSION_INDEXES = {"users_name_folded": "lower(name)"}


def test_models_and_migrations_agree(resolver_env, backend) -> None:
    with engine_for(resolver_env.database_url).connect() as conn, warnings.catch_warnings():
        if backend == "sqlite":
            warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression")
            warnings.filterwarnings("ignore", "autogenerate skipping metadata-specified expr")
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        if backend == "sqlite":
            for name, expression in EXPRESSION_INDEXES.items():
                query = text("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = :n")
                found = conn.execute(query, {"n": name}).scalar()
                assert found is not None and f"({expression})" in found.replace('"', "")
    assert diff == []
