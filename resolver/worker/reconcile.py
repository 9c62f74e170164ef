"""Housekeeping on the beat: end what the watchdog ends, re-publish jobs whose message was lost
and callbacks that stalled."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from resolver.broker.outbox import publish_job, waiting_callbacks, waiting_job_messages
from resolver.broker.publish import publish_callback
from resolver.callbacks import record
from resolver.core.logs import log
from resolver.store import slots
from resolver.store.callbacks import stalled_callbacks
from resolver.store.slots import stranded_jobs
from resolver.worker import watchdog

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from resolver.core.settings import Settings

logger = logging.getLogger(__name__)


def reconcile(session: Session, settings: Settings) -> list[int]:
    """Re-publish every stranded job. A duplicate message is harmless: leases make runs unique."""
    waiting = waiting_job_messages(settings.redis_url)
    # The watchdog first: a job it ends is not stranded any more. Should it fail as a whole (it
    # passes over a row it cannot handle), the re-publishing below still runs.
    try:
        ended = watchdog.sweep(session, settings)
        session.commit()
    except Exception as error:
        session.rollback()
        log(logger, logging.ERROR, "watchdog.failed", error=type(error).__name__)
    else:
        record.publish_all(ended)
    job_ids = stranded_jobs(session, waiting, settings.queued_grace_seconds)
    job_ids += slots.parked_ready(
        session,
        settings.max_jobs_per_user,
        settings.max_jobs_per_repo,
        settings.queued_grace_seconds,
    )
    for job_id in job_ids:
        log(logger, logging.WARNING, "job.republished", job=job_id)
        publish_job(session, job_id)
    stalled = stalled_callbacks(session, settings.callback_stall_seconds)
    # One whose message still waits in a backed-up queue is not sent again: each pass added a
    # copy of it, and the queue grew behind what it was already late with.
    queued = waiting_callbacks(settings.redis_url) if stalled else set()
    for callback_id in stalled:
        if callback_id in queued:
            continue
        log(logger, logging.WARNING, "callback.republished", callback=callback_id)
        publish_callback(callback_id)
    return job_ids
