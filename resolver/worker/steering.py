"""Steering: a request made in a conversation whose job is running joins that job at its
agent's next step, instead of waiting behind it.

Only the running job's requester, or someone who may push to its repository, may steer it;
anyone else gets the usual refusal. The request's own job stays parked while its message
waits (`store.steering`), ends as delivered when the agent takes it, and runs as a plain
follow-up when the running job ends first.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from integrations import registry
from resolver.callbacks import record
from resolver.contract.commands import parse_command
from resolver.contract.errors import CallbackError
from resolver.core.job import Inbox, InboxMessage
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs, slots, steering
from resolver.store.db import end_step
from resolver.store.models import Job
from resolver.worker.plan import check_permission, repository_of
from resolver.worker.request import load
from resolver.worker.values import Stop

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


def steer(session: Session, job_id: int, settings: Settings) -> bool:
    """Send a queued request to its conversation's running job, or refuse it; False when it is
    no steering message (no job of its conversation runs, or it is a command)."""
    job = jobs.get_job(session, job_id)
    target = steering.running_target(session, job) if _steerable(job) else None
    if target is None:
        return False
    if steering.is_waiting(session, target.id, job.id):
        return True  # a second delivery of the same message: it waits already
    target_id, target_repo = target.id, target.repo
    same_person = job.requester_id is not None and job.requester_id == target.requester_id
    end_step(session)  # the permission check asks the forge
    refusal = None if same_person else _refusal(session, job_id, target_id, target_repo, settings)
    # Read again under the conversation's hold, which the running job's end takes too: either
    # it has ended (this request runs as a follow-up), or its end finds this one parked. The
    # hold begins a transaction of its own, after whatever the permission check wrote.
    end_step(session)
    slots.hold_slots(session, target)
    # The request under its lock too (after the holds, as a worker's record takes them): a
    # stop of it meanwhile is seen here, or sees it parked.
    job, target = jobs.locked_job(session, job_id), jobs.get_job(session, target_id)
    if job.state != JobState.QUEUED:
        return True
    if target.state != JobState.RUNNING:
        return False  # it ended meanwhile: this request runs as a follow-up
    if refusal is not None:
        jobs.finish_job(session, job, JobState.FAILED, Outcome.REFUSED, error=refusal)
        callbacks = record.record_finish(session, job, settings)
    else:
        steering.add_message(session, target, job)
        callbacks = record.record_status(session, job)
    end_step(session)  # published after the commit: the outbox order
    log(logger, logging.INFO, "job.steering", job=job_id, target=target_id, refused=bool(refusal))
    record.publish_all(callbacks)
    return True


def _steerable(job: Job) -> bool:
    """A person's request (not a command, not a schedule's run) that has not started."""
    return (
        job.state == JobState.QUEUED
        and registry.find(job.source) is not None
        and parse_command(job.task) is None
    )


def _refusal(
    session: Session, job_id: int, target_id: int, target_repo: str | None, settings: Settings
) -> str | None:
    """Why the sender may not steer the running job; None for anyone who may push to its
    repository."""
    snapshot = load(session, job_id)
    snapshot = replace(snapshot, repo=snapshot.repo or target_repo)
    try:
        forge_name, full_name = repository_of(session, snapshot)
        forge = registry.forge(forge_name, snapshot.trigger, snapshot.requester_id, settings)
        check_permission(session, snapshot, forge, forge_name, full_name)
    except Stop as stop:
        return str(stop)
    except CallbackError as error:
        return f"I could not reach the forge to check who may steer job {target_id}: {error}"
    return None


def inbox_for(session: Session, job_id: int, settings: Settings) -> Inbox:
    """The running job's inbox, as one attempt of its agent reads it: each message once, the
    ones taken by an earlier attempt included. Each take is a step of `session`, the run's."""
    seen: set[int] = set()

    def take(step: int) -> list[InboxMessage]:
        messages, delivered = steering.take_messages(session, job_id, step, frozenset(seen))
        callbacks = [
            c for source in delivered for c in record.record_finish(session, source, settings)
        ]
        end_step(session)  # published after the commit: the outbox order
        record.publish_all(callbacks)
        seen.update(message.id for message in messages)
        return [InboxMessage(message.author, message.text) for message in messages]

    return take
