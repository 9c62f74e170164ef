"""jobs.model and steering_messages: the model a job used, and messages to running jobs

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model", sa.String(length=200), nullable=True))
    op.create_table(
        "steering_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("from_job_id", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column(
            "created_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("taken_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column("taken_at_step", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["from_job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "from_job_id", name="steering_once"),
    )
    with op.batch_alter_table("steering_messages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_steering_messages_job_id"), ["job_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("steering_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_steering_messages_job_id"))
    op.drop_table("steering_messages")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("model")
