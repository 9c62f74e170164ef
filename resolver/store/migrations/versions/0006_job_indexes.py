"""indexes for the per-requester and per-repository job counts

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_requester_state", ["requester_id", "state"], unique=False)
        batch_op.create_index("ix_jobs_repo_state", ["repo", "state"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_repo_state")
        batch_op.drop_index("ix_jobs_requester_state")
