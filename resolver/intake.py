"""From a routed trigger to rows: deduplicate, authorize, insert the job, then publish it.

The delivery row and the job row are written in one transaction; the unique
`(provider, delivery_key)` constraint makes concurrent copies of a delivery create one job.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal

from sqlalchemy import ColumnElement, ScalarSelect, bindparam, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from resolver.accounts import find_identity
from resolver.callbacks import publish_callback
from resolver.config import Settings
from resolver.db import session_scope
from resolver.jobs import NewJob, create_job
from resolver.logs import log
from resolver.models import Delivery, Identity, Job
from resolver.notices import (
    QUEUED,
    UNLINKED,
    NewNotice,
    record_notice,
    render_queued,
    render_unlinked,
)
from resolver.outbox import send_job_message
from resolver.states import JobState
from resolver.triggers import Trigger, WebhookEvent

logger = logging.getLogger(__name__)

Kind = Literal["created", "duplicate", "unlinked", "not_followup"]
_SQLITE_WRITER = threading.Lock()


@dataclass(frozen=True)
class Accepted:
    """What became of a trigger."""

    kind: Kind
    job_id: int | None = None
    queued_behind: int = 0
    message_id: str | None = None
    callbacks: tuple[int, ...] = ()
    """Notices recorded with the trigger, to send once the rows are committed."""


@dataclass(frozen=True)
class QueuePlace:
    behind: int
    limit_name: str = ""
    limit: int = 0


def accept(provider: str, event: WebhookEvent, trigger: Trigger, settings: Settings) -> Accepted:
    """Record the trigger once; publish its job after the commit. Blocking: run in a thread."""
    with session_scope() as session:
        with _one_writer(session):
            accepted = _record(session, provider, event, trigger, settings)
            session.commit()
        if accepted.kind == "created" and accepted.job_id and accepted.message_id:
            # Not under the writer lock: a slow or absent Redis must not hold up other writers.
            _publish(accepted.job_id, accepted.message_id)
        for callback_id in accepted.callbacks:
            _publish_callback(callback_id)
    return accepted


@contextmanager
def _one_writer(session: Session) -> Iterator[None]:
    """SQLite allows one writer at a time. Queueing this process's writers on a lock hands the
    database over at once, where SQLite's busy handler would have them sleep and poll."""
    if session.get_bind().dialect.name != "sqlite":
        yield
        return
    with _SQLITE_WRITER:
        yield


def _record(
    session: Session, provider: str, event: WebhookEvent, trigger: Trigger, settings: Settings
) -> Accepted:
    sender = trigger.sender
    identity = find_identity(session, provider, external_id=sender.external_id, login=sender.login)
    previous = _latest_job_id(session, trigger.conversation_key)
    if trigger.followup_only and previous is None:
        return Accepted("not_followup")
    context = _job_context(provider, event, trigger, previous)
    job = None if identity is None else _new_job(session, provider, trigger, identity, context)
    delivery_key = event.delivery_key[:300]
    try:
        session.execute(
            _INSERT_DELIVERY,
            {
                "provider": provider,
                "delivery_key": delivery_key,
                "event": event.key[:100],
                "job_id": job.id if job else None,
                "outcome": "job" if job else UNLINKED,
            },
        )
    except IntegrityError:  # a copy of this delivery got here first: its job is the answer
        session.rollback()
        return Accepted("duplicate", _first_job_id(session, provider, delivery_key))
    if job is None:
        notice = _notify_unlinked(session, provider, trigger, context)
        return Accepted("unlinked", callbacks=_ids(notice))
    place = queue_place(session, job, settings)
    notice = None
    if place.behind > 0:
        notice = _notify_queued(session, provider, job, trigger.conversation_key, place, context)
    return Accepted("created", job.id, place.behind, job.message_id, _ids(notice))


def _ids(callback_id: int | None) -> tuple[int, ...]:
    return () if callback_id is None else (callback_id,)


def _new_job(
    session: Session, provider: str, trigger: Trigger, identity: Identity, context: dict[str, Any]
) -> Job:
    new = NewJob(
        source=provider,
        task=trigger.task,
        repo=trigger.repo,
        requester=trigger.sender.login or trigger.sender.external_id,
        requester_id=identity.user_id,
        trigger=context,
        conversation_key=trigger.conversation_key,
    )
    return create_job(session, new)


def _ahead(same_owner: ColumnElement[bool]) -> ScalarSelect[int]:
    # One count per owner, so each can use its own index (an OR of both would not).
    active = Job.state.in_((JobState.QUEUED, JobState.RUNNING))
    return (
        select(func.count(Job.id))
        .where(same_owner, active, Job.id < bindparam("job"))
        .scalar_subquery()
    )


# Built once: composing a statement costs more than running it on SQLite.
_JOBS_AHEAD: Final = select(
    _ahead(Job.requester_id == bindparam("user")), _ahead(Job.repo == bindparam("repo"))
)
_LATEST_IN_CONVERSATION: Final = select(func.max(Job.id)).where(
    Job.conversation_key == bindparam("key")
)
_INSERT_DELIVERY: Final = insert(Delivery)
_FIRST_JOB_OF_DELIVERY: Final = select(Delivery.job_id).where(
    Delivery.provider == bindparam("provider"), Delivery.delivery_key == bindparam("key")
)


def queue_place(session: Session, job: Job, settings: Settings) -> QueuePlace:
    """How many jobs must finish before `job` may start, under the tighter of the two caps."""
    params = {"job": job.id, "user": job.requester_id, "repo": job.repo}
    user_ahead, repo_ahead = session.execute(_JOBS_AHEAD, params).one()
    place = QueuePlace(0)
    for name, count, limit in (
        ("user", user_ahead, settings.max_jobs_per_user),
        ("repository", repo_ahead, settings.max_jobs_per_repo),
    ):
        if count - limit + 1 > place.behind:
            place = QueuePlace(count - limit + 1, name, limit)
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
    return session.scalar(_LATEST_IN_CONVERSATION, {"key": conversation_key[:300]})


def _first_job_id(session: Session, provider: str, delivery_key: str) -> int | None:
    return session.scalar(_FIRST_JOB_OF_DELIVERY, {"provider": provider, "key": delivery_key})


def _notify_unlinked(
    session: Session, provider: str, trigger: Trigger, context: dict[str, Any]
) -> int | None:
    sender = trigger.sender
    callback_id = record_notice(
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
    return callback_id


def _notify_queued(
    session: Session,
    provider: str,
    job: Job,
    conversation_key: str,
    place: QueuePlace,
    context: dict[str, Any],
) -> int | None:
    return record_notice(
        session,
        NewNotice(
            provider=provider,
            kind=QUEUED,
            dedup_key=f"{QUEUED}:{job.id}",
            conversation_key=conversation_key,
            body=render_queued(place.behind, place.limit_name, place.limit),
            context=context,
            job_id=job.id,
        ),
    )


def _publish_callback(callback_id: int) -> None:
    try:
        publish_callback(callback_id)
    except Exception as error:  # committed: the reconciler sends stalled callbacks later
        warning = "webhook.publish_failed"
        log(logger, logging.WARNING, warning, callback=callback_id, error=repr(error))


def _publish(job_id: int, message_id: str) -> None:
    try:
        send_job_message(job_id, message_id)
    except Exception as error:  # the row is committed: the reconciler publishes it later
        log(logger, logging.WARNING, "webhook.publish_failed", job=job_id, error=repr(error))
