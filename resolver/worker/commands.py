"""Requests that are commands (`contract.commands`), answered at once: `@bot status` and
`@bot stop` (`@bot run <schedule>` is `schedules.commands`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations import registry
from resolver.callbacks import record, status
from resolver.contract.commands import Command
from resolver.contract.errors import CallbackError
from resolver.core.job import RunResult
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.store import conversations, jobs
from resolver.store import steering as store_steering
from resolver.store.db import end_step
from resolver.store.models import Job
from resolver.worker.plan import check_permission, repository_of
from resolver.worker.values import Snapshot, Stop

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def answer_stop(session: Session, snapshot: Snapshot, settings: Settings) -> RunResult:
    """`@bot stop`: cancel the conversation's active job, for whoever may."""
    return _answer(session, snapshot, "stop", settings)


def answer_status(session: Session, snapshot: Snapshot, settings: Settings) -> RunResult:
    """`@bot status`: the conversation's job, as its status message shows it."""
    return _answer(session, snapshot, "status", settings)


def _answer(
    session: Session, snapshot: Snapshot, command: Command, settings: Settings
) -> RunResult:
    """Answer the command in the conversation, in the run's session; the job itself has then
    succeeded."""
    target = _command_target(session, snapshot)
    callbacks: list[int] = []
    if target is None:
        text = "There is no job of mine in this conversation."
    elif command == "status":
        text = f"Job {target.id}:\n\n" + status.render(record.view_of(session, target, settings))
    elif target.state not in (JobState.QUEUED, JobState.RUNNING):
        text = _ended(target)
    elif (
        refusal := _stop_refusal(session, snapshot, target.id, target.requester_id, settings)
    ) is not None:
        text = refusal
    else:
        target = jobs.get_job(session, target.id)  # the check may have ended a step
        text, callbacks = _stop(session, target, snapshot.requester or "its requester")
    callbacks += record.record_reply(session, jobs.get_job(session, snapshot.id), text)
    end_step(session)  # published after the commit: the outbox order
    record.publish_all(callbacks)
    return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"command": command})


def _stop(session: Session, target: Job, by: str) -> tuple[str, list[int]]:
    """Stop `target`, and what to answer; it may have ended since it was read."""
    stopping = record.stop_job(session, target, by)
    if stopping is None:
        return _ended(target), []
    return f"Stopping job {target.id}. Its status message will say when it has stopped.", stopping


def _ended(job: Job) -> str:
    return f"Job {job.id} has already ended ({job.state})."


def _command_target(session: Session, snapshot: Snapshot) -> Job | None:
    """The job a command is about: the conversation's active job, else its latest one."""
    conversation_key = snapshot.trigger.origin.conversation_key or ""
    # The running job first: a request waiting to steer it is part of it, not the target.
    target = store_steering.running_target(session, jobs.get_job(session, snapshot.id))
    if target is None:
        target = conversations.active_in_conversation(
            session, conversation_key, exclude=snapshot.id
        )
    if target is None:
        target = conversations.previous_in_conversation(session, jobs.get_job(session, snapshot.id))
    return target


def _stop_refusal(
    session: Session, snapshot: Snapshot, job_id: int, owner_id: int | None, settings: Settings
) -> str | None:
    """Why the sender may not stop the job; None for whoever asked for it, and for anyone who
    may push to its repository."""
    if owner_id is not None and owner_id == snapshot.requester_id:
        return None
    try:
        forge_name, full_name = repository_of(session, snapshot)
        forge = registry.forge(forge_name, snapshot.trigger, snapshot.requester_id, settings)
        check_permission(session, snapshot, forge, forge_name, full_name)
    except Stop:
        return (
            f"Sorry, only the person who asked for job {job_id}, or someone who can push to "
            "its repository, may stop it."
        )
    except CallbackError as error:
        return f"I could not reach the forge to check who may stop job {job_id}: {error}"
    return None
