"""The migrations create exactly the tables the models describe, on both databases."""

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from resolver.store.db import engine_for
from resolver.store.models import Base


def test_models_and_migrations_agree(resolver_env, backend) -> None:
    with engine_for(resolver_env.database_url).connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
