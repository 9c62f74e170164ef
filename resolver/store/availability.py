"""Whether a database error means "try again shortly" rather than a bug."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from resolver.store.db import StoreError, StoreUnavailable, get_engine


def unavailable(error: StoreError) -> bool:
    """Whether `error` means "try again shortly": the database is locked, busy or unreachable,
    or a deadlock or serialisation failure (all OperationalError), or a statement failed while
    the schema is not this code's (an upgrade under way or still to run: on PostgreSQL each
    migration is a transaction, so a table or column it adds is missing to everyone else until
    it commits). The schema's revision is read only here, after a failure: a request that
    succeeds pays nothing for the check."""
    if isinstance(error, StoreUnavailable | PoolTimeout):
        return True
    if not isinstance(error, DBAPIError):
        return False
    from resolver.store.migrate import code_revision, schema_revision  # alembic: on failure only

    try:
        with get_engine().connect() as conn:
            return schema_revision(conn) != code_revision()
    except StoreError:  # the database failing again is as unavailable as the first time
        return True
