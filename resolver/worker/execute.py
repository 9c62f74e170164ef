"""Running one job: take its lease, keep it with a heartbeat (which passes a cancel on), run
the job's runner, record how it ended. Which runner runs a job is decided by the caller
(`resolver.runners.runner_for`).

The worker's one opener of transactions: each step of `execute` (steering, the lease, the run,
the record) is a transaction of its own, and the run's session is handed to the runner and
everything below it, which end a step (`store.db.end_step`) wherever they must commit before
going on (before a push, before publishing, before waiting on the network)."""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from resolver.broker.outbox import publish_job
from resolver.callbacks import record
from resolver.contract.commands import parse_command
from resolver.core import metrics, tracing
from resolver.core.job import AttemptLostError, JobContext, RunResult
from resolver.core.logs import log, redact
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs, slots
from resolver.store.db import StoreError, session_scope
from resolver.store.models import Job, utcnow
from resolver.worker import steering

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

Runner = Callable[["Session", JobContext], RunResult]
"""What a job does once a worker holds it (`resolver.runners.RUNNERS`), in the session of its
run: committed when it returns, rolled back when it raises."""


class _Heartbeat(threading.Thread):
    """Renews the job's lease, passes a cancel request on to the runner, and stops the job at
    its time limit. The limit is kept here, not by Celery: a threads pool has none."""

    def __init__(
        self, ctx: JobContext, owner: str, seconds: float, status_every: float, limit: float
    ) -> None:
        super().__init__(daemon=True, name=f"lease-{ctx.job_id}")
        self.ctx, self.owner, self.seconds = ctx, owner, seconds
        self.stopped = threading.Event()
        self.lost = False
        self.deadline = time.monotonic() + limit
        self.timed_out = False
        self.status_every = status_every
        self.status_at = time.monotonic()
        self.steps = 0
        self.trace = tracing.carrier()  # its status updates belong to the job's trace

    def run(self) -> None:
        with tracing.within(self.trace):
            self._keep()

    def _keep(self) -> None:
        renewed_at = time.monotonic()
        while not self.stopped.wait(self.seconds / 3):
            try:
                renewed_at = self._beat(renewed_at)
            except StoreError as error:
                log(
                    logger,
                    logging.WARNING,
                    "job.heartbeat_failed",
                    job=self.ctx.job_id,
                    error=type(error).__name__,
                )
            if not self.timed_out and time.monotonic() > self.deadline:
                self.timed_out = True
                log(logger, logging.WARNING, "job.time_limit", job=self.ctx.job_id)
                self.ctx.cancel()
            # Stop before the lease can run out: better to stop than to run twice.
            if self.lost or time.monotonic() - renewed_at > self.seconds * 0.8:
                self.lost = True
                self.ctx.cancel()
                return

    def _beat(self, renewed_at: float) -> float:
        with session_scope() as session:
            if not jobs.renew_lease(session, self.ctx.job_id, self.owner, self.seconds):
                self.lost = True
                return renewed_at
            job = jobs.get_job(session, self.ctx.job_id)
            if job.cancel_requested:
                self.ctx.cancel()
            callbacks = self._progress(session, job)
        for renew in list(self.ctx.on_beat):
            renew()
        record.publish_all(callbacks)
        return time.monotonic()

    def _progress(self, session: Session, job: Job) -> list[int]:
        """A status update when the agent has taken steps since the last one (throttled)."""
        if time.monotonic() - self.status_at < self.status_every:
            return []
        steps = jobs.count_steps(session, job.id)
        if steps == self.steps:
            return []
        self.steps, self.status_at = steps, time.monotonic()
        return record.record_status(session, job)


def _record(job_id: int, owner: str, outcome: RunResult, settings: Settings) -> None:
    with session_scope() as session:
        # Held before `next_waiting` reads (a job parking meanwhile is one it finds), and read
        # again under its lock: what a stop noted meanwhile is kept.
        slots.hold_slots(session, jobs.get_job(session, job_id))
        job = jobs.locked_job(session, job_id)
        if job.lease_owner != owner or job.state != JobState.RUNNING:
            log(logger, logging.WARNING, "job.lease_lost", job=job_id)
            return
        # Any secret this process has decrypted is masked in the stored error too.
        error = redact(outcome.error) if outcome.error else None
        jobs.finish_job(
            session, job, outcome.state, outcome.outcome, error=error, result=outcome.result
        )
        callbacks = record.record_finish(session, job, settings)
        waiting = slots.next_waiting(session, job)
        _observe_finish(job)
    log(logger, logging.INFO, "job.finished", job=job_id, state=outcome.state)
    record.publish_all(callbacks)
    if waiting:
        for waiting_id in waiting:
            with session_scope() as session:
                publish_job(session, waiting_id)


def _run(runner: Runner, ctx: JobContext) -> RunResult:
    """The runner, and the agent's inbox, in the run's session."""
    with session_scope() as session:
        ctx.inbox = steering.inbox_for(session, ctx.job_id, ctx.settings)
        return runner(session, ctx)


def _observe_finish(job: Job) -> None:
    ran = metrics.since(job.started_at, job.finished_at or utcnow())
    if ran is not None:
        metrics.JOB_DURATION_SECONDS.labels(str(job.outcome)).observe(ran)
    metrics.LLM_TOKENS.labels("prompt").inc(job.prompt_tokens or 0)
    metrics.LLM_TOKENS.labels("completion").inc(job.completion_tokens or 0)
    metrics.LLM_COST.inc(job.cost_usd or 0.0)


def execute(job_id: int, runner_for: Callable[[str], Runner], settings: Settings) -> None:
    """Run one job if we can take its lease; a finished or held job is a no-op. `settings` are
    the task's, read once by its root and handed to the runner in its context."""
    owner = uuid.uuid4().hex
    with session_scope() as session:
        steered = steering.steer(session, job_id, settings)
    if steered:
        return  # a request to its conversation's running job joins it (or is refused)
    with session_scope() as session:
        try:
            job = jobs.get_job(session, job_id)
        except jobs.JobNotFoundError:
            log(logger, logging.WARNING, "job.missing", job=job_id)
            return
        # Commands (`@bot stop`) never wait: they are how a person gets a stuck job out.
        waits = job.state == JobState.QUEUED and parse_command(job.task) not in ("stop", "status")
        if waits:  # counted and taken (or parked) as one step: `hold_slots`
            slots.hold_slots(session, job)
        if waits and slots.conversation_busy(session, job):
            # A follow-up runs after the earlier job of its conversation, which publishes it.
            slots.park(session, job)
            log(logger, logging.INFO, "job.waiting_for_conversation", job=job_id)
            return
        if waits and slots.over_capacity(
            session, job, settings.max_jobs_per_user, settings.max_jobs_per_repo
        ):
            # It stays queued; it is published again when a running job of the same
            # requester or repository ends (or by the reconciler).
            slots.park(session, job)
            log(logger, logging.INFO, "job.waiting_for_capacity", job=job_id)
            return
        if not jobs.take_lease(session, job_id, owner, settings.lease_seconds):
            log(logger, logging.INFO, "job.skipped", job=job_id)
            return
        source = job.source
        waited = metrics.since(job.created_at, utcnow())
    if waited is not None:
        metrics.JOB_START_SECONDS.observe(waited)
    ctx = JobContext(job_id, settings, owner)
    heartbeat = _Heartbeat(
        ctx, owner, settings.lease_seconds, settings.status_interval, settings.job_time_limit
    )
    heartbeat.start()
    log(logger, logging.INFO, "job.started", job=job_id, source=source)
    lost: AttemptLostError | None = None
    try:
        outcome = _run(runner_for(source), ctx)
    except AttemptLostError as error:
        lost, outcome = error, RunResult(JobState.FAILED, Outcome.ERROR, error=str(error))
    except Exception as error:  # a bug in a runner: fail the job once, tell the user
        logger.exception("job.crashed", extra={"fields": {"job": job_id}})
        reason = f"internal error: {type(error).__name__}"
        outcome = RunResult(JobState.FAILED, Outcome.ERROR, error=reason)
    finally:
        heartbeat.stopped.set()
        heartbeat.join()
    if heartbeat.lost:
        # Another attempt owns (or will own) the job once our lease runs out; record nothing.
        log(logger, logging.WARNING, "job.lease_lost", job=job_id)
        return
    if heartbeat.timed_out:
        reason = (
            f"The job ran longer than its time limit ({settings.job_time_limit} s), so I "
            "stopped it. Nothing unfinished was pushed."
        )
        outcome = RunResult(JobState.FAILED, Outcome.ERROR, error=reason, result=outcome.result)
    elif ctx.cancelled.is_set():
        outcome = RunResult(JobState.CANCELLED, Outcome.CANCELLED, result=outcome.result)
    elif lost is not None:
        _lose_attempt(job_id, owner, lost, settings)
        return
    _record(job_id, owner, outcome, settings)


def _lose_attempt(job_id: int, owner: str, lost: AttemptLostError, settings: Settings) -> None:
    """End an attempt whose sandbox the infrastructure took away, as if its worker had died:
    nothing is recorded, and its lease runs out after a pause that grows with its attempts
    (jittered: an engine restart loses every job at once), when the reconciler sends the job
    again. The last allowed attempt fails the job instead, saying why."""
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        attempts = job.attempts
        if attempts < settings.job_max_attempts:
            pause = settings.lease_seconds * attempts * random.uniform(1.0, 1.5)
            if jobs.renew_lease(session, job_id, owner, pause):
                log(logger, logging.WARNING, "job.attempt_lost", job=job_id, attempt=attempts)
            return
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    reason = (
        f"The sandbox kept dying under this job ({tries}; the last time: {lost}), so I gave up "
        "rather than try again. An operator can run `resolver doctor`."
    )
    _record(job_id, owner, RunResult(JobState.FAILED, Outcome.ERROR, error=reason), settings)
