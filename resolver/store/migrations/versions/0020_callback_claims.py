"""callbacks.claimed_until: until when one try owns a callback

Revision ID: 0020
Revises: 0019

Two copies of a callback's message running at once (the reconciler's copy of one that still
waited in a backed-up queue) both posted its reply. A try now claims the callback first; a copy
that finds it claimed leaves it. An upgraded database has no claims: every callback is free.
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


# Plain ALTER TABLE on both databases (SQLite drops a column since 3.35): a batch would copy
# the table, reflecting the tables its keys refer to, as far as `users`, whose expression index
# SQLAlchemy cannot reflect.


def upgrade() -> None:
    column = sa.Column(
        "claimed_until", resolver.store.models.UTCDateTime(timezone=True), nullable=True
    )
    op.add_column("callbacks", column)


def downgrade() -> None:
    op.drop_column("callbacks", "claimed_until")
