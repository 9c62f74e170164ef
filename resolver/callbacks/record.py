"""Recording what a job sends: the status message, 👀, replies, the pull request.

Recording is done inside the caller's transaction (`record_*`, returning callback ids); the
caller publishes the ids after its commit (`publish_all`), the outbox order. `actions` sends
them, one Celery task per try (`resolver.tasks.deliver`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import JsonValue

from integrations import registry
from resolver.broker.publish import publish_callback
from resolver.callbacks import status
from resolver.contract.callbacks import PullToOpen, PullToUpdate, Reply, StatusUpdate
from resolver.contract.results import read_result
from resolver.contract.triggers import Planned, read_trigger
from resolver.contract.verification import verification_of
from resolver.core.job import QueuePlace, ahead_counted, place_in_queue
from resolver.core.logs import log
from resolver.core.sanitize import sanitize
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.features.conflicts import callbacks as conflicts
from resolver.features.review_requests import callbacks as review_requests
from resolver.features.reviews import callbacks as reviews
from resolver.store import jobs, slots, steering
from resolver.store.callbacks import record_callback
from resolver.store.models import Job, utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


def job_url(job_id: int, settings: Settings) -> str:
    return f"{settings.public_url.rstrip('/')}/jobs/{job_id}"


def planned_of(job: Job) -> Planned | None:
    """Where the job's repository lives, as the worker planned it (None before it did)."""
    return read_trigger(job.trigger).planned


def view_of(session: Session, job: Job, settings: Settings) -> status.JobView:
    steps = jobs.count_steps(session, job.id)
    result = read_result(job.result)
    planned = planned_of(job)
    # What the model (or a repository's setup output) wrote is shown sanitised; a refusal is
    # the bot's own words, which name the requester on purpose.
    hosts = forge_hosts(job)
    error = job.error
    if error and job.outcome != Outcome.REFUSED:
        error = sanitize(error, hosts)
    return status.JobView(
        id=job.id,
        state=job.state,
        outcome=job.outcome,
        repo=(planned.repo if planned else None) or job.repo,
        steps=steps,
        cost_usd=job.cost_usd,
        started_at=job.started_at,
        finished_at=job.finished_at,
        now=utcnow(),
        job_url=job_url(job.id, settings),
        summary=sanitize(result.summary or "", hosts),
        error=error,
        pr_url=job.pr_url,
        branch=job.branch,
        pr_pending=result.pull_pending and not job.pr_url,
        updated_pull=result.updated_pull,
        max_steps=result.max_steps,
        pull_word=pull_word(planned.provider if planned else None),
        pull_error=result.pull_error or None,
        # The host's words, but they quote what a repository chose: a path, a check's name.
        notes=tuple(sanitize(note, hosts) for note in result.notes),
        place=_place(session, job, settings),
        stopped_by=_stopped_by(job),
        verification=verification_of(result.verification),
        files=result.files,
        files_total=result.files_total,
        model=job.model,
        steering=_steering(job),
        steered=result.steered,
    )


def _steering(job: Job) -> int | None:
    """The running job a parked request waits in (published again, it runs on its own)."""
    waiting = job.state == JobState.QUEUED and job.message_id == slots.PARKED
    return read_result(job.result).steering if waiting else None


def _stopped_by(job: Job) -> str | None:
    by = read_result(job.result).stopped_by
    asked = job.cancel_requested or job.state == JobState.CANCELLED
    return str(by) if by and asked else None


def _place(session: Session, job: Job, settings: Settings) -> QueuePlace | None:
    """A queued job's place in line (the caps count the active jobs ahead of it)."""
    if job.state != JobState.QUEUED:
        return None
    ahead = slots.jobs_ahead(session.connection(), [job.id], ahead_counted(settings)).get(job.id)
    return place_in_queue(*ahead, settings) if ahead else None


def pull_word(forge_name: object) -> str:
    """What the job's forge calls a pull request."""
    found = registry.find(forge_name) if isinstance(forge_name, str) else None
    return found.pull_word if found is not None else "pull request"


def forge_hosts(job: Job) -> set[str]:
    """The hosts of the job's own forge pages: images there may stay images."""
    urls = (read_trigger(job.trigger).url, job.pr_url)
    return {urlsplit(url).hostname or "" for url in urls if isinstance(url, str)} - {""}


def has_conversation(job: Job) -> bool:
    return registry.find(job.source) is not None


def record_status(session: Session, job: Job) -> list[int]:
    """Ask for the job's status message to be brought up to date."""
    result = read_result(job.result)
    if not has_conversation(job) or result.command or result.quiet:
        return []
    return [record_callback(session, job.source, StatusUpdate(job_id=job.id), job.id).id]


def stop_job(session: Session, job: Job, by: str, account: str | None = None) -> list[int] | None:
    """Stop `job` on behalf of `by` (`account`: their stable id, where known): a queued job
    ends now, a running one at its next step. Its status message says who asked. The requests
    still waiting in its inbox (steering) were part of it and end with it, whoever pressed stop
    and wherever (the callbacks to publish after the commit). None, and nothing written, when
    the job has ended, perhaps since the caller read it: `job` then says how."""
    if not jobs.request_cancel(session, job):
        return None
    stopper: dict[str, JsonValue] = {"stopped_by": by}
    if account is not None:
        stopper["stopped_by_account"] = account
    jobs.note_result(job, stopper)  # read under the job's lock: nobody's change is lost
    callbacks = record_status(session, job)
    for source in steering.waiting_sources(session, job.id):
        if jobs.request_cancel(session, source):  # not taken by the agent meanwhile
            callbacks += record_status(session, source)
    return callbacks


def record_reply(session: Session, job: Job, text: str) -> list[int]:
    """A plain reply in the job's conversation (answers to `@bot status` and `@bot stop`)."""
    if not has_conversation(job):
        return []
    reply = Reply(job_id=job.id, text=text)
    return [record_callback(session, job.source, reply, job.id).id]


def record_finish(session: Session, job: Job, settings: Settings) -> list[int]:
    """What a finished job sends: its pull request (when it pushed a new branch), its status."""
    ids: list[int] = []
    planned = planned_of(job)
    wants_pull = (
        job.state == JobState.SUCCEEDED
        and job.outcome == Outcome.CHANGED_CODE
        and job.branch
        and not job.pr_url
    )
    if planned is not None and wants_pull:
        jobs.note_result(job, {"pull_pending": True})
        opening = record_callback(session, planned.provider, PullToOpen(job_id=job.id), job.id)
        ids.append(opening.id)
    elif planned is not None and _updated_pull(job):
        updating = record_callback(session, planned.provider, PullToUpdate(job_id=job.id), job.id)
        ids.append(updating.id)
    replies = reviews.record_thread_replies(
        session, job, forge_hosts(job), job_url(job.id, settings)
    )
    reports = conflicts.record_unresolved_reports(
        session, job, forge_hosts(job), job_url(job.id, settings)
    )
    review = review_requests.record_review(session, job, forge_hosts(job))
    return ids + replies + reports + review + record_status(session, job)


def _updated_pull(job: Job) -> bool:
    """A follow-up that pushed to its pull request's branch: the description is rewritten."""
    return (
        job.state == JobState.SUCCEEDED
        and job.outcome == Outcome.CHANGED_CODE
        and bool(job.branch and job.pr_url)
        and read_result(job.result).updated_pull
    )


def publish_all(callback_ids: list[int]) -> None:
    """Publish recorded callbacks after their commit; one that fails is left to the reconciler."""
    for callback_id in callback_ids:
        try:
            publish_callback(callback_id)
        except Exception as error:  # committed rows: the reconciler re-sends stalled callbacks
            log(
                logger,
                logging.WARNING,
                "callback.publish_failed",
                callback=callback_id,
                error=repr(error),
            )
