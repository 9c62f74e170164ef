"""web_sessions and used_links: server-side web sessions, and one-time links once used

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("provider", sa.String(length=20), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column(
            "started_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("seen_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "checked_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_hash"),
    )
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.create_index("ix_web_sessions_person", ["provider", "external_id"], unique=False)
    op.create_table(
        "used_links",
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "expires_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False
        ),
        sa.PrimaryKeyConstraint("key_hash"),
    )


def downgrade() -> None:
    op.drop_table("used_links")
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_web_sessions_person")
    op.drop_table("web_sessions")
