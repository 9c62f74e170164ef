"""The job outbox: publish after commit, and repair jobs whose message was lost."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import timedelta

import redis
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from resolver.broker.celery_app import JOBS_QUEUE
from resolver.broker.publish import job_message, send_messages
from resolver.callbacks import replies
from resolver.callbacks.send import publish_callback, stalled_callbacks
from resolver.core.logs import log
from resolver.core.settings import get_settings
from resolver.core.states import JobState
from resolver.store.jobs import new_message_id
from resolver.store.models import Job, utcnow
from resolver.worker import watchdog

logger = logging.getLogger(__name__)


def send_job_message(job_id: int, message_id: str) -> None:
    """Put the job's message on the jobs queue."""
    send_messages([job_message(job_id, message_id)])


def publish_job(session: Session, job_id: int) -> str:
    """Send the job's message under a new id, noted on the row. The row must be committed."""
    message_id = new_message_id()
    send_job_message(job_id, message_id)
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(message_id=message_id, published_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    session.commit()
    log(logger, logging.INFO, "job.published", job=job_id, message=message_id)
    return message_id


def _ids_in(raw_messages: Iterable[bytes | str]) -> set[str]:
    ids = set()
    for raw in raw_messages:
        try:
            data = json.loads(raw)
        except (ValueError, TypeError):
            continue
        message = data[0] if isinstance(data, list) and data else data
        task_id = isinstance(message, dict) and message.get("headers", {}).get("id")
        if task_id:
            ids.add(str(task_id))
    return ids


def waiting_message_ids(client: redis.Redis, queue: str = JOBS_QUEUE) -> set[str]:
    """Task ids still waiting in the queue's lists (every priority level)."""
    ids: set[str] = set()
    for key in client.scan_iter(match=f"{queue}*"):
        if client.type(key) in (b"list", "list"):
            ids |= _ids_in(client.lrange(key, 0, -1))
    return ids


def stranded_jobs(session: Session, waiting: set[str], grace: float) -> list[int]:
    """Queued jobs whose message is gone, and running jobs whose worker stopped renewing."""
    now = utcnow()
    cutoff = now - timedelta(seconds=grace)
    queued = session.scalars(
        select(Job).where(
            Job.state == JobState.QUEUED,
            or_(
                Job.published_at < cutoff, (Job.published_at.is_(None)) & (Job.created_at < cutoff)
            ),
        )
    )
    lost = [job.id for job in queued if job.message_id not in waiting]
    expired = session.scalars(
        select(Job.id).where(Job.state == JobState.RUNNING, Job.lease_expires_at < now)
    )
    return lost + list(expired)


def reconcile(session: Session) -> list[int]:
    """Re-publish every stranded job. A duplicate message is harmless: leases make runs unique."""
    settings = get_settings()
    client = redis.Redis.from_url(settings.redis_url)
    try:
        waiting = waiting_message_ids(client)
    finally:
        client.close()
    # The watchdog first: a job it ends is not stranded any more.
    ended = watchdog.sweep(session, settings)
    session.commit()
    replies.publish_all(ended)
    job_ids = stranded_jobs(session, waiting, settings.queued_grace_seconds)
    for job_id in job_ids:
        log(logger, logging.WARNING, "job.republished", job=job_id)
        publish_job(session, job_id)
    for callback_id in stalled_callbacks(session):
        log(logger, logging.WARNING, "callback.republished", callback=callback_id)
        publish_callback(callback_id)
    return job_ids
