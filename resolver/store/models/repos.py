"""What is kept per repository: routes, schedules and their runs, CI fix attempts, the bot's
open pull requests and the repository's options."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from resolver.store.models.base import Base, utcnow


class RepoRoute(Base):
    """The default repository of a Slack channel, Jira project or Linear team.

    `repo` names its forge: `github:owner/name` or `gitlab:group/project`.
    """

    __tablename__ = "repo_routes"
    __table_args__ = (UniqueConstraint("provider", "scope", name="repo_route_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    scope: Mapped[str] = mapped_column(String(200))
    repo: Mapped[str] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ScheduleRepo(Base):
    """A repository that has schedules: who the runs act as, its run limits, and whether its
    `.resolver/schedules.yml` is followed. `repo` names its forge (`github:owner/name`)."""

    __tablename__ = "schedule_repos"
    __table_args__ = (UniqueConstraint("repo", name="schedule_repo_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo: Mapped[str] = mapped_column(String(300))
    installation_id: Mapped[int | None] = mapped_column(Integer)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    follow_file: Mapped[bool] = mapped_column(default=False)
    # The operator's limits (None: the defaults), and the file's, which may only tighten them.
    runs_per_hour: Mapped[int | None] = mapped_column(Integer)
    concurrent_runs: Mapped[int | None] = mapped_column(Integer)
    open_prs: Mapped[int | None] = mapped_column(Integer)
    file_limits: Mapped[dict[str, Any]] = mapped_column(default=dict)
    synced_at: Mapped[datetime | None]
    sync_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    schedules: Mapped[list[Schedule]] = relationship(
        back_populates="repository", cascade="all, delete-orphan"
    )


class Schedule(Base):
    """Recurring agent work on one repository: when (cron and timezone), what (a built-in task
    or a prompt), within which limits, and what the bot remembers of its pull request."""

    __tablename__ = "schedules"
    __table_args__ = (UniqueConstraint("repo_id", "name", name="schedule_name_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(
        ForeignKey("schedule_repos.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    origin: Mapped[str] = mapped_column(String(10))  # service | file
    cron: Mapped[str] = mapped_column(String(100))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    task: Mapped[str] = mapped_column(String(40))
    prompt: Mapped[str | None] = mapped_column(Text)
    test_command: Mapped[str | None] = mapped_column(String(500))
    dry_run: Mapped[bool] = mapped_column(default=False)
    max_iterations: Mapped[int | None] = mapped_column(Integer)
    max_cost_usd: Mapped[float | None] = mapped_column(Float)
    enabled: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # The newest slot handed to the queue; slots up to it are never looked at again.
    last_due_at: Mapped[datetime | None]
    # The schedule's pull request: open, or declined (closed unmerged) for these inputs.
    pull_state: Mapped[str | None] = mapped_column(String(10))
    pull_branch: Mapped[str | None] = mapped_column(String(300))
    pull_head: Mapped[str | None] = mapped_column(String(64))
    pull_inputs: Mapped[str | None] = mapped_column(String(64))

    repository: Mapped[ScheduleRepo] = relationship(back_populates="schedules")


class ScheduleRun(Base):
    """One due slot of a schedule, or one request to run it now.

    `(schedule_id, due_at)` is unique: two beat processes, or a restarted one, start a slot
    once. A run over a limit waits here (`waiting_for` says which) until the limit allows it.
    """

    __tablename__ = "schedule_runs"
    __table_args__ = (UniqueConstraint("schedule_id", "due_at", name="schedule_run_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    schedule_id: Mapped[int] = mapped_column(
        ForeignKey("schedules.id", ondelete="CASCADE"), index=True
    )
    due_at: Mapped[datetime]
    reason: Mapped[str] = mapped_column(String(20))  # cron | manual | comment
    requested_by: Mapped[str | None] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(20), default="waiting", index=True)
    waiting_for: Mapped[str | None] = mapped_column(String(300))
    job_id: Mapped[int | None] = mapped_column(
        ForeignKey("jobs.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]


class CIAttempt(Base):
    """How many fix jobs a red check on one head commit of the bot's branch has had."""

    __tablename__ = "ci_attempts"
    __table_args__ = (UniqueConstraint("forge", "repo", "head_sha", name="ci_attempt_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    forge: Mapped[str] = mapped_column(String(20))
    repo: Mapped[str] = mapped_column(String(300))
    head_sha: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class BotPull(Base):
    """A pull request from one of the bot's branches: kept from the forge's events that
    open, close and retarget it, and from the bot's own pushes, so that intake knows without a
    forge call whether a push to a base can concern the bot."""

    __tablename__ = "bot_pulls"
    __table_args__ = (
        UniqueConstraint("forge", "repo", "number", name="bot_pull_once"),
        Index("bot_pulls_by_base", "forge", "repo", "base"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    forge: Mapped[str] = mapped_column(String(20))
    repo: Mapped[str] = mapped_column(String(300))
    number: Mapped[int] = mapped_column(Integer)
    head: Mapped[str] = mapped_column(String(255))
    base: Mapped[str] = mapped_column(String(255))
    closed: Mapped[bool] = mapped_column(default=False)
    """Closed or merged: kept, so that a schedule's pull request a person closed no longer
    counts toward the open-PR limit (`schedules.queue`)."""
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class RepoOptions(Base):
    """A repository's `.resolver/config.yml` options that intake decides on (`ci`, `conflicts`),
    as a worker last read them at a default-branch commit. None: not read yet (the next event
    runs a job, which reads it). A push that touches the file removes the row."""

    __tablename__ = "repo_options"
    __table_args__ = (UniqueConstraint("forge", "repo", name="repo_options_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    forge: Mapped[str] = mapped_column(String(20))
    repo: Mapped[str] = mapped_column(String(300))
    sha: Mapped[str | None] = mapped_column(String(64))
    ci_fix: Mapped[bool | None]
    conflicts_fix: Mapped[bool | None]
    ci_asked_at: Mapped[datetime | None]
    """When intake let an event through to a job that reads `ci` (others wait for it a while)."""
    conflicts_asked_at: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
