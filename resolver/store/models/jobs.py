"""A job and what surrounds it: the delivery that made it, its trajectory, notices, callbacks
and their attempts, and steering messages."""

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

from resolver.contract.triggers import JsonObject
from resolver.store.models.base import Base, utcnow


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
    # Until when a try owns the callback (`store.callbacks.claim`): a copy of its message that
    # arrives meanwhile leaves it to that try. Null: no try holds it.
    claimed_until: Mapped[datetime | None]

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
