"""Requests that are commands (parsed in commands.py), answered at once: `@bot status`,
`@bot stop` and `@bot run <schedule>`."""

from __future__ import annotations

from sqlalchemy.orm import Session

from resolver.callbacks import replies, status
from resolver.contract import outbound as providers
from resolver.contract.commands import Command, schedule_to_run
from resolver.contract.errors import CallbackError
from resolver.core.job import RunResult
from resolver.core.states import JobState, Outcome
from resolver.schedules.queue import answer_run_request
from resolver.schedules.spec import ScheduleError
from resolver.schedules.store import ScheduleNotFoundError, find_schedule
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Job
from resolver.worker.plan import check_permission, repository_of
from resolver.worker.values import Snapshot, Stop


def run_command(snapshot: Snapshot, command: Command) -> RunResult:
    """Answer the command in the conversation; the job itself has then succeeded."""
    if command == "run":
        return _run_schedule(snapshot)
    with session_scope() as session:
        target = _command_target(session, snapshot)
        me = jobs.get_job(session, snapshot.id)
        callbacks: list[int] = []
        if target is None:
            text = "There is no job of mine in this conversation."
        elif command == "status":
            text = f"Job {target.id}:\n\n" + status.render(replies.view_of(session, target))
        elif target.state not in (JobState.QUEUED, JobState.RUNNING):
            text = f"Job {target.id} has already ended ({target.state})."
        elif (refusal := _stop_refusal(snapshot, target.id, target.requester_id)) is not None:
            text = refusal
        else:
            jobs.request_cancel(session, target)
            text = f"Stopping job {target.id}. Its status message will say when it has stopped."
            if target.state == JobState.CANCELLED:  # it was still queued: over now
                callbacks += replies.record_status(session, target)
        callbacks += replies.record_reply(session, me, text)
    replies.publish_all(callbacks)
    return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"command": command})


def _command_target(session: Session, snapshot: Snapshot) -> Job | None:
    """The job a command is about: the conversation's active job, else its latest one."""
    conversation_key = str(snapshot.trigger.get("conversation_key") or "")
    target = jobs.active_in_conversation(session, conversation_key, exclude=snapshot.id)
    if target is None:
        target = jobs.previous_in_conversation(session, jobs.get_job(session, snapshot.id))
    return target


def _stop_refusal(snapshot: Snapshot, job_id: int, owner_id: int | None) -> str | None:
    """Why the sender may not stop the job; None for whoever asked for it, and for anyone who
    may push to its repository."""
    if owner_id is not None and owner_id == snapshot.requester_id:
        return None
    try:
        forge_name, full_name = repository_of(snapshot)
        forge = providers.forge(forge_name, snapshot.trigger, snapshot.requester_id)
        check_permission(snapshot, forge, forge_name, full_name)
    except Stop:
        return (
            f"Sorry, only the person who asked for job {job_id}, or someone who can push to "
            "its repository, may stop it."
        )
    except CallbackError as error:
        return f"I could not reach the forge to check who may stop job {job_id}: {error}"
    return None


def names_a_schedule(snapshot: Snapshot) -> bool:
    """Whether `@bot run <name>` names one of the repository's schedules."""
    name = schedule_to_run(snapshot.task)
    try:
        forge_name, full_name = repository_of(snapshot)
    except Stop:
        return False
    with session_scope() as session:
        try:
            find_schedule(session, name or "", f"{forge_name}:{full_name}")
        except ScheduleNotFoundError:
            return False
        except ScheduleError:
            return True  # it names one; the reply says what is wrong with it
    return True


def _run_schedule(snapshot: Snapshot) -> RunResult:
    """`@bot run <schedule>`: a run of one of the repository's schedules now, for people who
    may push to the repository (the usual permission check)."""
    name = schedule_to_run(snapshot.task) or ""
    try:
        forge_name, full_name = repository_of(snapshot)
        forge = providers.forge(forge_name, snapshot.trigger, snapshot.requester_id)
        check_permission(snapshot, forge, forge_name, full_name)
        text = answer_run_request(f"{forge_name}:{full_name}", name, snapshot.requester)
    except Stop as stop:
        text = str(stop)
    except CallbackError as error:
        text = f"I could not reach the forge to check who may run schedules: {error}"
    with session_scope() as session:
        callbacks = replies.record_reply(session, jobs.get_job(session, snapshot.id), text)
    replies.publish_all(callbacks)
    return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"command": "run"})
