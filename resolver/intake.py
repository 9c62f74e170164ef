"""From a routed trigger to rows: deduplicate, authorize, insert the job, then publish it.

The delivery row and the job row are written in one transaction; the unique
`(provider, delivery_key)` constraint makes concurrent copies of a delivery create one job.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from resolver.accounts import find_identity
from resolver.config import Settings
from resolver.db import session_scope
from resolver.jobs import NewJob, create_job
from resolver.logs import log
from resolver.models import Delivery, Job
from resolver.notices import (
    QUEUED,
    UNLINKED,
    NewNotice,
    record_notice,
    render_queued,
    render_unlinked,
)
from resolver.outbox import publish_job
from resolver.states import JobState
from resolver.triggers import Trigger, WebhookEvent

logger = logging.getLogger(__name__)

Kind = Literal["created", "duplicate", "unlinked", "not_followup"]


@dataclass(frozen=True)
class Accepted:
    """What became of a trigger."""

    kind: Kind
    job_id: int | None = None
    queued_behind: int = 0


@dataclass(frozen=True)
class QueuePlace:
    behind: int
    limit_name: str = ""
    limit: int = 0


def accept(provider: str, event: WebhookEvent, trigger: Trigger, settings: Settings) -> Accepted:
    """Record the trigger once; publish its job after the commit. Blocking: run in a thread."""
    with session_scope() as session:
        accepted = _record(session, provider, event, trigger, settings)
        if accepted.kind == "created" and accepted.job_id is not None:
            session.commit()
            _publish(session, accepted.job_id)
    return accepted


def _record(
    session: Session, provider: str, event: WebhookEvent, trigger: Trigger, settings: Settings
) -> Accepted:
    sender = trigger.sender
    identity = find_identity(session, provider, external_id=sender.external_id, login=sender.login)
    previous = _latest_job_id(session, trigger.conversation_key)
    if trigger.followup_only and previous is None:
        return Accepted("not_followup")
    context = _job_context(provider, event, trigger, previous)
    delivery = Delivery(provider=provider, delivery_key=event.delivery_key[:300], event=event.key)
    session.add(delivery)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        return Accepted("duplicate", _first_job_id(session, provider, delivery.delivery_key))
    if identity is None:
        delivery.outcome = UNLINKED
        _notify_unlinked(session, provider, trigger, context)
        return Accepted("unlinked")
    job = create_job(
        session,
        NewJob(
            source=provider,
            task=trigger.task,
            repo=trigger.repo,
            requester=sender.login or sender.external_id,
            requester_id=identity.user_id,
            trigger=context,
        ),
    )
    job.conversation_key = trigger.conversation_key[:300]
    delivery.job_id, delivery.outcome = job.id, "job"
    place = queue_place(session, job, settings)
    if place.behind > 0:
        _notify_queued(session, provider, job, place, context)
    return Accepted("created", job.id, place.behind)


def queue_place(session: Session, job: Job, settings: Settings) -> QueuePlace:
    """How many jobs must finish before `job` may start, under the tighter of the two caps."""
    active = Job.state.in_((JobState.QUEUED, JobState.RUNNING)) & (Job.id < job.id)
    caps = [("user", Job.requester_id == job.requester_id, settings.max_jobs_per_user)]
    if job.repo:
        caps.append(("repository", Job.repo == job.repo, settings.max_jobs_per_repo))
    place = QueuePlace(0)
    for name, same_owner, limit in caps:
        ahead = session.scalar(select(func.count(Job.id)).where(active, same_owner)) or 0
        if ahead - limit + 1 > place.behind:
            place = QueuePlace(ahead - limit + 1, name, limit)
    return place


def _job_context(
    provider: str, event: WebhookEvent, trigger: Trigger, previous: int | None
) -> dict[str, Any]:
    return {
        **trigger.context,
        "provider": provider,
        "event": event.key,
        "delivery": event.delivery_key,
        "conversation_key": trigger.conversation_key,
        "is_followup": previous is not None,
        "previous_job_id": previous,
        "sender": {"id": trigger.sender.external_id, "login": trigger.sender.login},
    }


def _latest_job_id(session: Session, conversation_key: str) -> int | None:
    return session.scalar(
        select(func.max(Job.id)).where(Job.conversation_key == conversation_key[:300])
    )


def _first_job_id(session: Session, provider: str, delivery_key: str) -> int | None:
    return session.scalar(
        select(Delivery.job_id).where(
            Delivery.provider == provider, Delivery.delivery_key == delivery_key
        )
    )


def _notify_unlinked(
    session: Session, provider: str, trigger: Trigger, context: dict[str, Any]
) -> None:
    sender = trigger.sender
    record_notice(
        session,
        NewNotice(
            provider=provider,
            kind=UNLINKED,
            dedup_key=f"{UNLINKED}:{sender.external_id}:{trigger.conversation_key}",
            conversation_key=trigger.conversation_key,
            body=render_unlinked(provider, sender.external_id, sender.login),
            context=context,
        ),
    )
    log(logger, logging.INFO, f"webhook.{provider}.unlinked_sender", sender=sender.external_id)


def _notify_queued(
    session: Session, provider: str, job: Job, place: QueuePlace, context: dict[str, Any]
) -> None:
    record_notice(
        session,
        NewNotice(
            provider=provider,
            kind=QUEUED,
            dedup_key=f"{QUEUED}:{job.id}",
            conversation_key=job.conversation_key or "",
            body=render_queued(place.behind, place.limit_name, place.limit),
            context=context,
            job_id=job.id,
        ),
    )


def _publish(session: Session, job_id: int) -> None:
    try:
        publish_job(session, job_id)
    except Exception as error:  # the row is committed: the reconciler publishes it later
        session.rollback()
        log(logger, logging.WARNING, "webhook.publish_failed", job=job_id, error=repr(error))
