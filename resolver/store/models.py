"""Database tables (SQLAlchemy 2). Migrations in resolver/store/migrations mirror these."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from resolver.contract.triggers import JsonObject


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC on every backend; SQLite stores naive values."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {
        datetime: UTCDateTime,
        dict[str, Any]: JSON,
        dict[str, Any] | None: JSON,
        JsonObject: JSON,
    }


class User(Base):
    """A person. Names are unique whatever their case (`users_name_folded`), so a name never
    stands for two people; who is an admin is `is_admin`, never a name."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    is_admin: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    identities: Mapped[list[Identity]] = relationship(back_populates="user")


Index("users_name_folded", func.lower(User.name), unique=True)


class Identity(Base):
    """A provider account (GitHub login, Slack TEAM:USER, …) that belongs to a user."""

    __tablename__ = "identities"
    __table_args__ = (UniqueConstraint("provider", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    provider: Mapped[str] = mapped_column(String(20))
    external_id: Mapped[str] = mapped_column(String(200))
    login: Mapped[str | None] = mapped_column(String(200), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # When its owner last signed in to the web app with it (None: never since linking).
    signed_in_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(back_populates="identities")


class Installation(Base):
    """A GitHub App installation, Slack team, Jira site, Linear organisation or GitLab instance."""

    __tablename__ = "installations"
    __table_args__ = (UniqueConstraint("provider", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    external_id: Mapped[str] = mapped_column(String(200))
    name: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Credential(Base):
    """An encrypted secret. `ciphertext` is a Fernet token; the plaintext is never stored."""

    __tablename__ = "credentials"
    __table_args__ = (
        CheckConstraint(
            "(user_id IS NULL) <> (installation_id IS NULL)", name="credential_has_one_owner"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(20))
    scope: Mapped[str | None] = mapped_column(String(500))
    ciphertext: Mapped[str] = mapped_column(Text)
    refresh_ciphertext: Mapped[str | None] = mapped_column(Text)
    expires_at: Mapped[datetime | None]
    # When the forge refused it (a 401, or its refresh token refused): sign in again.
    revoked_at: Mapped[datetime | None]
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    installation_id: Mapped[int | None] = mapped_column(
        ForeignKey("installations.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    def __repr__(self) -> str:
        return f"Credential(id={self.id}, provider={self.provider!r}, kind={self.kind!r})"


class StoredSetting(Base):
    """A setting kept in the vault (`/setup`, `resolver setup`): a `Settings` field name and its
    value, encrypted like every credential. The environment wins over it when set."""

    __tablename__ = "stored_settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    ciphertext: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Delivery(Base):
    """One webhook delivery. The unique key is what deduplication relies on."""

    __tablename__ = "deliveries"
    __table_args__ = (UniqueConstraint("provider", "delivery_key", name="delivery_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    delivery_key: Mapped[str] = mapped_column(String(300))
    event: Mapped[str | None] = mapped_column(String(100))
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    outcome: Mapped[str] = mapped_column(String(40), default="received")
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))


class Job(Base):
    __tablename__ = "jobs"
    # What the caps and the queue place count: the active jobs of a requester or a repository.
    __table_args__ = (
        Index("ix_jobs_requester_state", "requester_id", "state"),
        Index("ix_jobs_repo_state", "repo", "state"),
        # What the budgets sum: a repository's or requester's jobs of a day, the service's month.
        Index("ix_jobs_repo_started", "repo", "started_at"),
        Index("ix_jobs_requester_started", "requester_id", "started_at"),
        Index("ix_jobs_started", "started_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    source: Mapped[str] = mapped_column(String(20))
    trigger: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Looked up through the (repo, state) and (requester_id, state) indexes above.
    repo: Mapped[str | None] = mapped_column(String(300))
    task: Mapped[str] = mapped_column(Text, default="")
    requester_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    requester: Mapped[str | None] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(20), default="queued", index=True)
    outcome: Mapped[str | None] = mapped_column(String(20))
    result: Mapped[JsonObject] = mapped_column(default=dict)
    """Read and written as `contract.results.JobResult` (`read_result`, `merged_result`)."""
    error: Mapped[str | None] = mapped_column(Text)
    pr_url: Mapped[str | None] = mapped_column(String(500))
    branch: Mapped[str | None] = mapped_column(String(300))
    cost_usd: Mapped[float | None] = mapped_column(Float)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # The most a running job may still spend (its per-job limits), held against the shared
    # budgets from its start to its end; a finished job counts what it spent.
    reserved_usd: Mapped[float | None] = mapped_column(Float)
    reserved_tokens: Mapped[int | None] = mapped_column(Integer)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None]
    message_id: Mapped[str | None] = mapped_column(String(100))
    published_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    # The thread, issue or PR the job belongs to: follow-ups and Slack thread replies find it.
    conversation_key: Mapped[str | None] = mapped_column(String(300), index=True)
    # The one status message of the job, as its conversation referenced it, and what it said.
    status_ref: Mapped[dict[str, Any] | None]
    # The LLM model the agent ran with (the operator's default, the repository's or the request's).
    model: Mapped[str | None] = mapped_column(String(200))

    events: Mapped[list[JobEvent]] = relationship(
        back_populates="job", order_by="JobEvent.seq", cascade="all, delete-orphan"
    )


class JobEvent(Base):
    """One entry of a job's trajectory: an action, an observation or a note. Already redacted."""

    __tablename__ = "job_events"
    __table_args__ = (UniqueConstraint("job_id", "seq", name="job_event_order"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    job: Mapped[Job] = relationship(back_populates="events")


class Notice(Base):
    """A reply without an agent run (unlinked account, queue position), sent by the callbacks.

    `dedup_key` is the rate limit: one notice per person and thing, enforced by the database.
    """

    __tablename__ = "notices"
    __table_args__ = (UniqueConstraint("provider", "dedup_key", name="notice_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(40))
    dedup_key: Mapped[str] = mapped_column(String(300))
    conversation_key: Mapped[str] = mapped_column(String(300), index=True)
    body: Mapped[str] = mapped_column(Text)
    # Where to reply (a job's `trigger`) and the notice's own entries: `contract.notices`.
    context: Mapped[JsonObject] = mapped_column(default=dict)
    job_id: Mapped[int | None] = mapped_column(
        ForeignKey("jobs.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(index=True)


class Callback(Base):
    """One outbound call to a provider (a reaction, a comment, an edit, a pull request).

    Delivered by its own Celery task; every try is a CallbackAttempt row.
    """

    __tablename__ = "callbacks"

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int | None] = mapped_column(
        ForeignKey("jobs.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(20))
    action: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    state: Mapped[str] = mapped_column(String(20), default="pending", index=True)
    result: Mapped[JsonObject] = mapped_column(default=dict)
    """Read and written as `contract.callbacks.CallbackResult`."""
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    # When the next try should happen: a pending callback long past it lost its message.
    due_at: Mapped[datetime | None] = mapped_column(default=utcnow)

    attempts: Mapped[list[CallbackAttempt]] = relationship(
        back_populates="callback", order_by="CallbackAttempt.number", cascade="all, delete-orphan"
    )


class CallbackAttempt(Base):
    """One try of a callback: when, how it ended, and what the provider said."""

    __tablename__ = "callback_attempts"
    __table_args__ = (UniqueConstraint("callback_id", "number", name="callback_attempt_order"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    callback_id: Mapped[int] = mapped_column(
        ForeignKey("callbacks.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(String(20))  # ok | transient | permanent
    status: Mapped[int | None] = mapped_column(Integer)
    detail: Mapped[str | None] = mapped_column(Text)
    retry_after: Mapped[float | None] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(default=utcnow)

    callback: Mapped[Callback] = relationship(back_populates="attempts")


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


class SteeringMessage(Base):
    """A message sent to a running job (`job_id`) by a later request of its conversation
    (`from_job_id`, parked meanwhile). The agent reads it at its next step and marks it taken;
    one left untaken when the job ends runs as a follow-up (its parked job)."""

    __tablename__ = "steering_messages"
    __table_args__ = (UniqueConstraint("job_id", "from_job_id", name="steering_once"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    from_job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    author: Mapped[str | None] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    taken_at: Mapped[datetime | None]
    taken_at_step: Mapped[int | None] = mapped_column(Integer)


class WebSession(Base):
    """A signed-in web session. The browser's cookie carries a random key; only its SHA-256 is
    stored, so reading this table gives no live cookie. Deleting the row signs the cookie out."""

    __tablename__ = "web_sessions"
    __table_args__ = (Index("ix_web_sessions_person", "provider", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    provider: Mapped[str] = mapped_column(String(20))
    external_id: Mapped[str] = mapped_column(String(200))
    # Sign-in: the absolute lifetime counts from here, across rotations of the key.
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The idle timeout counts from here; written at most once a `store.web_sessions.TOUCH`.
    seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    # When the forge last accepted the session's token (admins' pages check it again).
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)


class UsedLink(Base):
    """A one-time link (the operator's, an account link) that was used, kept until it expires."""

    __tablename__ = "used_links"

    key_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime]
