"""schedules: repositories with schedules, schedules, and their runs

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

import resolver.store.models

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schedule_repos",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo", sa.String(length=300), nullable=False),
        sa.Column("installation_id", sa.Integer(), nullable=True),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("follow_file", sa.Boolean(), nullable=False),
        sa.Column("runs_per_hour", sa.Integer(), nullable=True),
        sa.Column("concurrent_runs", sa.Integer(), nullable=True),
        sa.Column("open_prs", sa.Integer(), nullable=True),
        sa.Column("file_limits", sa.JSON(), nullable=False),
        sa.Column("synced_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column("sync_error", sa.Text(), nullable=True),
        sa.Column("created_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("repo", name="schedule_repo_once"),
    )
    op.create_table(
        "schedules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("origin", sa.String(length=10), nullable=False),
        sa.Column("cron", sa.String(length=100), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("task", sa.String(length=40), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("test_command", sa.String(length=500), nullable=True),
        sa.Column("dry_run", sa.Boolean(), nullable=False),
        sa.Column("max_iterations", sa.Integer(), nullable=True),
        sa.Column("max_cost_usd", sa.Float(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_due_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column("pull_state", sa.String(length=10), nullable=True),
        sa.Column("pull_branch", sa.String(length=300), nullable=True),
        sa.Column("pull_head", sa.String(length=64), nullable=True),
        sa.Column("pull_inputs", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["repo_id"], ["schedule_repos.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("repo_id", "name", name="schedule_name_once"),
    )
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_schedules_repo_id"), ["repo_id"], unique=False)

    op.create_table(
        "schedule_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("schedule_id", sa.Integer(), nullable=False),
        sa.Column("due_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(length=20), nullable=False),
        sa.Column("requested_by", sa.String(length=200), nullable=True),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("waiting_for", sa.String(length=300), nullable=True),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.Column("created_at", resolver.store.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("started_at", resolver.store.models.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("schedule_id", "due_at", name="schedule_run_once"),
    )
    with op.batch_alter_table("schedule_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_schedule_runs_job_id"), ["job_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_schedule_runs_schedule_id"), ["schedule_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_schedule_runs_state"), ["state"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("schedule_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_schedule_runs_state"))
        batch_op.drop_index(batch_op.f("ix_schedule_runs_schedule_id"))
        batch_op.drop_index(batch_op.f("ix_schedule_runs_job_id"))
    op.drop_table("schedule_runs")
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_schedules_repo_id"))
    op.drop_table("schedules")
    op.drop_table("schedule_repos")
