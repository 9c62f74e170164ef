"""The service's settings for running jobs (Celery, leases, repair), schedules and webhook
ingress."""

from __future__ import annotations

from pydantic import BaseModel, Field


class JobFields(BaseModel):
    """Jobs and Celery."""

    job_time_limit: int = Field(
        default=3600,
        ge=10,
        description="Time limit of one agent job, in seconds; the job's own heartbeat enforces "
        "it, in any worker pool.",
    )
    lease_seconds: int = Field(
        default=10, ge=3, description="A running job's lease; a dead worker's job returns after it."
    )
    push_unfinished: bool = Field(
        default=False,
        description="Push the branch of a job that could not finish (no pull request is opened).",
    )
    status_interval: float = Field(
        default=15.0, ge=1, description="Least seconds between progress edits of a status message."
    )
    reconcile_interval: float = Field(
        default=5.0, gt=0, description="Seconds between reconciler sweeps (lost messages, leases)."
    )
    queued_grace_seconds: float = Field(
        default=30.0, ge=0, description="How long a queued job may lack its message before repair."
    )
    callback_stall_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long past its due time a pending callback may lack its message before "
        "repair.",
    )
    job_max_attempts: int = Field(
        default=3,
        ge=1,
        description="Runs of one job whose worker or sandbox died before it is failed, visibly, "
        "for good.",
    )
    status_repost_seconds: float = Field(
        default=120.0,
        gt=0,
        description="Pause before a finished job's failed status message is posted again (it "
        "grows with each of the three rounds).",
    )
    queue_expiry_seconds: int = Field(
        default=6 * 3600,
        ge=60,
        description="A job still queued after this long (behind a cap) expires, visibly.",
    )

    @property
    def visibility_timeout(self) -> int:
        """Above the longest hard time limit, so a running task is never handed out twice."""
        return self.job_time_limit + 600


class ScheduleFields(BaseModel):
    """Schedules (Renovate's prHourlyLimit and prConcurrentLimit, applied to runs)."""

    schedule_runs_per_hour: int = Field(
        default=60, ge=1, description="Scheduled runs the whole service starts per hour."
    )
    schedule_concurrent_runs: int = Field(
        default=4, ge=1, description="Scheduled runs the whole service runs at once."
    )
    schedule_open_prs: int = Field(
        default=50, ge=1, description="Open pull requests from schedules, service-wide."
    )
    schedule_repo_runs_per_hour: int = Field(
        default=4, ge=1, description="Scheduled runs per repository per hour, unless set for it."
    )
    schedule_repo_concurrent_runs: int = Field(
        default=1, ge=1, description="Scheduled runs at once per repository, unless set for it."
    )
    schedule_repo_open_prs: int = Field(
        default=5, ge=1, description="Open schedule pull requests per repository, unless set."
    )


class IngressFields(BaseModel):
    """Webhook ingress."""

    max_body_bytes: int = Field(
        default=5 * 1024 * 1024, ge=1024, description="Largest webhook body accepted."
    )
    trigger_label: str = Field(default="resolver", description="Label that starts a job.")
    allowed_bots: str = Field(
        default="", description="Comma-separated bot logins allowed to trigger jobs."
    )
    max_jobs_per_user: int = Field(default=3, ge=1, description="Concurrent jobs per user.")
    max_jobs_per_repo: int = Field(default=5, ge=1, description="Concurrent jobs per repository.")
    bot_account_ids: str = Field(
        default="",
        description="Comma-separated account ids of the bot at the providers that mention by "
        "account (a tracker's account id, a forge's user id): mentions by account count, and its "
        "own events are ignored.",
    )

    @property
    def allowed_bot_logins(self) -> frozenset[str]:
        return frozenset(b.strip().lower() for b in self.allowed_bots.split(",") if b.strip())
