"""bot_pulls and repo_options: what intake reads to know whether an event can concern the bot

Revision ID: 0017
Revises: 0016

Both start empty on an upgraded database: a repository without a `repo_options` row is not
known yet, so its next default-branch push or red check runs a job as before, and that job
records the repository's options and the bot's open pull requests into its base.
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bot_pulls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("forge", sa.String(length=20), nullable=False),
        sa.Column("repo", sa.String(length=300), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("head", sa.String(length=255), nullable=False),
        sa.Column("base", sa.String(length=255), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("updated_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("forge", "repo", "number", name="bot_pull_once"),
    )
    op.create_index("bot_pulls_by_base", "bot_pulls", ["forge", "repo", "base"])
    op.create_table(
        "repo_options",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("forge", sa.String(length=20), nullable=False),
        sa.Column("repo", sa.String(length=300), nullable=False),
        sa.Column("sha", sa.String(length=64), nullable=True),
        sa.Column("ci_fix", sa.Boolean(), nullable=True),
        sa.Column("conflicts_fix", sa.Boolean(), nullable=True),
        sa.Column("ci_asked_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "conflicts_asked_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column("updated_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("forge", "repo", name="repo_options_once"),
    )


def downgrade() -> None:
    op.drop_table("repo_options")
    op.drop_index("bot_pulls_by_base", table_name="bot_pulls")
    op.drop_table("bot_pulls")
