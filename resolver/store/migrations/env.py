"""Alembic environment: the URL comes from the caller (resolver.store.migrate) or the settings."""

from alembic import context

from resolver.store.db import make_engine
from resolver.store.models import Base

config = context.config
url = config.get_main_option("sqlalchemy.url")
if not url:
    from resolver.core.settings import get_settings

    url = get_settings().database_url

engine = make_engine(url)
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=url.startswith("sqlite"),
        # One transaction per migration, on PostgreSQL as on SQLite: a data migration commits
        # batch by batch (`migrate.rewrite_in_batches`), and each schema change stays whole.
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
