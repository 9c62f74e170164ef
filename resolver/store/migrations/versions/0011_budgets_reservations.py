"""jobs.reserved_usd and reserved_tokens, and the indexes the shared budgets sum through

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reserved_usd", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("reserved_tokens", sa.Integer(), nullable=True))
        batch_op.create_index("ix_jobs_repo_started", ["repo", "started_at"], unique=False)
        batch_op.create_index(
            "ix_jobs_requester_started", ["requester_id", "started_at"], unique=False
        )
        batch_op.create_index("ix_jobs_started", ["started_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_started")
        batch_op.drop_index("ix_jobs_requester_started")
        batch_op.drop_index("ix_jobs_repo_started")
        batch_op.drop_column("reserved_tokens")
        batch_op.drop_column("reserved_usd")
