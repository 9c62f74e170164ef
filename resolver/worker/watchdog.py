"""The watchdog: every accepted trigger reaches an end its requester sees.

The reconciler runs it on every sweep, before it re-publishes stranded jobs. It ends what would
otherwise stay stuck, each with a message in the job's conversation:
- a job whose worker died RESOLVER_JOB_MAX_ATTEMPTS times (it comes back, and its worker dies
  again): failed, saying so, rather than tried forever;
- a job still queued after RESOLVER_QUEUE_EXPIRY_SECONDS (behind a cap or a busy conversation):
  expired;
- a pull request that could not be opened for good: the status says why, rather than
  "opening…" forever;
- a finished job whose final status message could not be posted: posted again, a few times,
  further apart each time (RESOLVER_STATUS_REPOST_SECONDS);
- a review job whose review the forge never took: failed, saying why, in its status message or,
  for an auto-review (which has none), in one plain comment that is never sent again.

Each job is handled in a savepoint of its own: a row the sweep cannot handle (a result written
by a newer release after a rollback, a bug) is logged and passed over, and the sweep, and the
re-publishing after it, go on. A job that cannot be ended with its messages is ended without
them.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Final, TypeVar

from resolver.callbacks import record
from resolver.contract.outbound import OPEN_PULL, STATUS
from resolver.contract.results import read_result
from resolver.contract.review import POST_REVIEW
from resolver.core.logs import log
from resolver.core.sanitize import sanitize
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome, is_terminal
from resolver.features.review_requests.callbacks import unposted_reason
from resolver.store import callbacks, jobs
from resolver.store.models import Callback, Job, utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

T = TypeVar("T")

STATUS_ROUNDS: Final = 3
"""How many more times a finished job's final status is tried after its callback failed."""
LOOKBACK: Final = timedelta(days=1)
"""Callbacks that failed longer ago than this are left alone (each sweep stays small)."""


def sweep(session: Session, settings: Settings) -> list[int]:
    """End what is stuck; returns the callbacks to publish once the session is committed."""
    return [
        *_end_exhausted(session, settings.job_max_attempts, settings),
        *_expire_queued(session, timedelta(seconds=settings.queue_expiry_seconds), settings),
        *_unstick_pulls(session),
        *_repost_final_statuses(session, timedelta(seconds=settings.status_repost_seconds)),
        *_fail_unposted_reviews(session, settings),
    ]


def _end_exhausted(session: Session, max_attempts: int, settings: Settings) -> list[int]:
    def still(job: Job) -> bool:  # not taken again by a worker, nor ended, since it was read
        expires = job.lease_expires_at
        exhausted = job.attempts >= max_attempts and expires is not None and expires < utcnow()
        return job.state == JobState.RUNNING and exhausted

    ids: list[int] = []
    for job_id in [job.id for job in jobs.exhausted_jobs(session, max_attempts)]:
        job = _locked_if(session, job_id, still)
        if job is None:
            continue
        reason = (
            f"The worker running this job stopped {job.attempts} times (it ran out of memory, "
            "or was restarted), so I gave up rather than try again."
        )
        ids += _end(session, job, JobState.FAILED, Outcome.ERROR, reason, settings)
    return ids


def _expire_queued(session: Session, expiry: timedelta, settings: Settings) -> list[int]:
    cutoff = utcnow() - expiry

    def still(job: Job) -> bool:  # not taken by a worker, nor stopped, since it was read
        return job.state == JobState.QUEUED and job.created_at < cutoff

    ids: list[int] = []
    for job_id in [job.id for job in jobs.queued_before(session, cutoff)]:
        job = _locked_if(session, job_id, still)
        if job is None:
            continue
        hours = expiry.total_seconds() / 3600
        reason = (
            f"This request waited more than {hours:g} hours for a free slot, so it expired "
            "without running. Mention me again if it is still wanted."
        )
        ids += _end(session, job, JobState.FAILED, Outcome.EXPIRED, reason, settings)
    return ids


def _locked_if(session: Session, job_id: int, still: Callable[[Job], bool]) -> Job | None:
    """The job read again under its lock (`jobs.locked_job`), if it `still` qualifies: the
    sweep read it at its start, and a worker, a person or a callback may have changed it since.
    Taken before the job's savepoint: on SQLite the lock is the write lock of the transaction,
    which a savepoint would already have begun. The job's lock alone, never a hold after it:
    the worker's `_record` takes its holds first, then this lock."""
    job = jobs.locked_job(session, job_id)
    if still(job):
        return job
    log(logger, logging.INFO, "watchdog.job_moved_on", job=job_id, state=job.state)
    return None


def _end(
    session: Session, job: Job, state: JobState, outcome: Outcome, reason: str, settings: Settings
) -> list[int]:
    """End `job`, read under its lock (`_locked_if`), with its messages."""
    job_id = job.id
    log(logger, logging.WARNING, "watchdog.job_ended", job=job_id, outcome=outcome)

    def finish(tell: bool) -> list[int]:
        job.lease_owner = None
        jobs.finish_job(session, job, state, outcome, error=reason)
        return record.record_finish(session, job, settings) if tell else []

    ended = _isolated(session, job_id, "end", lambda: finish(tell=True))
    if ended is None:  # its messages do not render: ended all the same, without them
        _isolated(session, job_id, "end_quietly", lambda: finish(tell=False))
    return ended or []


def _isolated(
    session: Session, job_id: int, duty: str, body: Callable[[], list[T]]
) -> list[T] | None:
    """`body`'s result for one job, in a savepoint of its own; None when it raised (logged,
    its changes undone), so that one row does not stop the sweep."""
    try:
        with session.begin_nested():
            return body()
    except Exception as error:
        fields = {"job": job_id, "duty": duty, "error": type(error).__name__}
        log(logger, logging.ERROR, "watchdog.row_failed", **fields)
        return None


def _recently_failed(session: Session, action: str) -> list[tuple[Job, Callback]]:
    return callbacks.recently_failed(session, action, utcnow() - LOOKBACK)


def _unstick_pulls(session: Session) -> list[int]:
    """Jobs waiting for a pull request whose opening failed for good."""
    ids: list[int] = []
    for stale, callback in _recently_failed(session, OPEN_PULL):
        # Read again under its lock: the pull request may have opened since (`send_open_pull`
        # writes its number under the same lock).
        job = jobs.locked_job(session, stale.id)

        def unstick(job: Job = job, callback: Callback = callback) -> list[int]:
            if not read_result(job.result).pull_pending:
                return []
            jobs.note_result(job, {"pull_pending": False, "pull_error": callback.error or ""})
            log(logger, logging.WARNING, "watchdog.pull_failed", job=job.id)
            return record.record_status(session, job)

        ids += _isolated(session, job.id, "unstick_pull", unstick) or []
    return ids


def _repost_final_statuses(session: Session, pause: timedelta) -> list[int]:
    """Finished jobs whose newest status callback failed: try again, a bounded number of times,
    further apart each time (RESOLVER_STATUS_REPOST_SECONDS)."""

    def still(callback: Callback, job: Job) -> bool:
        return is_terminal(JobState(job.state)) and callback.id == _newest_status(session, job)

    ids: list[int] = []
    for stale, callback in _recently_failed(session, STATUS):
        if not still(callback, stale):
            continue
        # Read again under its lock: a pull request opened meanwhile wrote its number in the
        # result this writes back (and recorded a newer status, which is sent anyway).
        job = _locked_if(session, stale.id, functools.partial(still, callback))
        if job is None:
            continue

        def repost(job: Job = job, callback: Callback = callback) -> list[int]:
            rounds = read_result(job.result).status_rounds
            waited = utcnow() - (callback.finished_at or utcnow())
            if rounds >= STATUS_ROUNDS or waited < pause * (rounds + 1):
                return []
            jobs.note_result(job, {"status_rounds": rounds + 1})
            log(logger, logging.WARNING, "watchdog.status_reposted", job=job.id, round=rounds + 1)
            return record.record_status(session, job)

        ids += _isolated(session, job.id, "repost_status", repost) or []
    return ids


def _fail_unposted_reviews(session: Session, settings: Settings) -> list[int]:
    """Review jobs whose newest review callback failed for good: the job fails, saying why
    (its status message says so); an auto-review has no status message, so one plain comment
    tells the pull request, once: the job is no longer succeeded when the next sweep looks."""

    def still(callback: Callback, job: Job) -> bool:
        newest = callbacks.newest_callback(session, job.id, POST_REVIEW)
        return job.state == JobState.SUCCEEDED and callback.id == newest

    ids: list[int] = []
    for stale, callback in _recently_failed(session, POST_REVIEW):
        if not still(callback, stale):
            continue
        # Read again under its lock: another sweep (a reconciler whose slot overlapped) may
        # have failed it meanwhile, and would have said so a second time.
        job = _locked_if(session, stale.id, functools.partial(still, callback))
        if job is None:
            continue

        def fail(job: Job = job, callback: Callback = callback) -> list[int]:
            reason = unposted_reason(callback.error, record.pull_word(job.source))
            jobs.finish_job(session, job, JobState.FAILED, Outcome.ERROR, error=reason)
            log(logger, logging.WARNING, "watchdog.review_unposted", job=job.id)
            told = record.record_status(session, job)
            return told or _say_unposted(session, job, reason, settings)

        ids += _isolated(session, job.id, "fail_unposted_review", fail) or []
    return ids


def _say_unposted(session: Session, job: Job, reason: str, settings: Settings) -> list[int]:
    link = f"The review is on [its job's page]({record.job_url(job.id, settings)})."
    # The reason quotes the forge's answer: made safe to show, as every posted text is.
    return record.record_reply(
        session, job, sanitize(f"{reason}\n\n{link}", record.forge_hosts(job))
    )


def _newest_status(session: Session, job: Job) -> int | None:
    return callbacks.newest_callback(session, job.id, STATUS)
