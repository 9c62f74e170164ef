"""ci_attempts: fix jobs per head commit of the bot's branch (red CI on its own PR)

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ci_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("forge", sa.String(length=20), nullable=False),
        sa.Column("repo", sa.String(length=300), nullable=False),
        sa.Column("head_sha", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("updated_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("forge", "repo", "head_sha", name="ci_attempt_once"),
    )


def downgrade() -> None:
    op.drop_table("ci_attempts")
