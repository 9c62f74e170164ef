"""status messages, repository routes, callback due times

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("status_ref", sa.JSON(), nullable=True))

    with op.batch_alter_table("callbacks", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("due_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True)
        )

    op.create_table(
        "repo_routes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=20), nullable=False),
        sa.Column("scope", sa.String(length=200), nullable=False),
        sa.Column("repo", sa.String(length=300), nullable=False),
        sa.Column("created_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("provider", "scope", name="repo_route_once"),
    )


def downgrade() -> None:
    op.drop_table("repo_routes")
    with op.batch_alter_table("callbacks", schema=None) as batch_op:
        batch_op.drop_column("due_at")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("status_ref")
