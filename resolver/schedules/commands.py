"""`@bot run <schedule>`: a run of one of the repository's schedules now."""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations import registry
from resolver.callbacks import record
from resolver.contract.commands import schedule_to_run
from resolver.contract.errors import CallbackError
from resolver.core.job import RunResult
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.schedules.asked import answer_run_request
from resolver.schedules.spec import ScheduleError
from resolver.schedules.store import ScheduleNotFoundError, find_schedule
from resolver.store import jobs
from resolver.store.db import end_step
from resolver.worker.plan import check_permission, repository_of
from resolver.worker.values import Snapshot, Stop

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def names_a_schedule(session: Session, snapshot: Snapshot) -> bool:
    """Whether `@bot run <name>` names one of the repository's schedules, read in a step of the
    run's `session`."""
    name = schedule_to_run(snapshot.task)
    try:
        forge_name, full_name = repository_of(session, snapshot)
    except Stop:
        return False
    try:
        find_schedule(session, name or "", f"{forge_name}:{full_name}")
        found = True
    except ScheduleNotFoundError:
        found = False
    except ScheduleError:
        found = True  # it names one; the reply says what is wrong with it
    end_step(session)
    return found


def run(session: Session, snapshot: Snapshot, settings: Settings) -> RunResult:
    """`@bot run <schedule>`: a run of one of the repository's schedules now, for people who
    may push to the repository (the usual permission check); answered in the run's `session`."""
    name = schedule_to_run(snapshot.task) or ""
    try:
        forge_name, full_name = repository_of(session, snapshot)
        forge = registry.forge(forge_name, snapshot.trigger, snapshot.requester_id, settings)
        check_permission(session, snapshot, forge, forge_name, full_name)
        text = answer_run_request(f"{forge_name}:{full_name}", name, snapshot.requester, settings)
    except Stop as stop:
        text = str(stop)
    except CallbackError as error:
        text = f"I could not reach the forge to check who may run schedules: {error}"
    callbacks = record.record_reply(session, jobs.get_job(session, snapshot.id), text)
    end_step(session)  # published after the commit: the outbox order
    record.publish_all(callbacks)
    return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"command": "run"})
