"""stored_settings: settings kept in the vault (app credentials, webhook secrets)

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stored_settings",
        sa.Column("name", sa.String(length=64), primary_key=True),
        sa.Column("ciphertext", sa.Text(), nullable=False),
        sa.Column("updated_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("stored_settings")
