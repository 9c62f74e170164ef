"""identities.signed_in_at and credentials.revoked_at: stale links, revoked forge tokens

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("identities", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("signed_in_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True)
        )
    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("revoked_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.drop_column("revoked_at")
    with op.batch_alter_table("identities", schema=None) as batch_op:
        batch_op.drop_column("signed_in_at")
