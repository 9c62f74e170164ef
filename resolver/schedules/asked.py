"""Runs people ask for now: `resolver schedules run`, a schedule's "Run now" button (counted once
however often it is pressed while its run waits or runs), and `@bot run <schedule>`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from resolver.core.settings import Settings
from resolver.schedules.queue import (
    ACTIVE,
    COMMENT,
    WAITING,
    admission_lock,
    insert_run,
    publish_started,
    start_waiting,
)
from resolver.schedules.spec import FILE_PATH, ScheduleError
from resolver.schedules.store import (
    ScheduleNotFoundError,
    find_schedule,
    in_transaction,
    names,
    schedules_of,
)
from resolver.store import holds
from resolver.store.models import Job, ScheduleRun, utcnow


@dataclass(frozen=True)
class Requested:
    """A run asked for now: started as `job_id`, or waiting for a limit."""

    schedule: str
    repo: str
    run_id: int
    job_id: int | None
    waiting_for: str | None
    already: bool = False
    """The run is one `by` asked for before, still waiting or running (`run_now(once=True)`)."""


def run_now(
    name: str,
    repo: str | None,
    reason: str,
    by: str | None,
    settings: Settings,
    *,
    once: bool = False,
) -> Requested:
    """Record a run of the schedule now and start it unless a limit holds it. With `once` (a
    button, which a double click or a second tab presses twice), a run of the same reason that
    `by` asked for and that is still waiting or running is the answer instead of a new one."""
    now = utcnow()
    recorded = in_transaction(_record_requested, name, repo, now, reason, by, once)
    with admission_lock(settings.redis_url) as held:
        started = in_transaction(start_waiting, now, settings) if held else []
    publish_started(started)
    return in_transaction(_read_requested, recorded)


def _record_requested(
    session: Session,
    name: str,
    repo: str | None,
    now: datetime,
    reason: str,
    by: str | None,
    once: bool,
) -> Requested:
    schedule = find_schedule(session, name, repo)
    if not schedule.enabled:
        raise ScheduleError(f"schedule {name!r} is disabled: it left {FILE_PATH}")
    named = (schedule.name, schedule.repository.repo)
    if once:
        # Of two presses at once, the second waits here for the first's commit and finds its run.
        holds.hold(session.connection(), [f"schedule-request:{schedule.id}"])
        earlier = _active_request(session, schedule.id, reason, by)
        if earlier is not None:
            return Requested(*named, earlier, None, None, already=True)
    run_id = insert_run(session, schedule.id, now, reason, by)
    assert run_id is not None  # a new due time, to the microsecond
    return Requested(*named, run_id, None, None)


def _active_request(session: Session, schedule_id: int, reason: str, by: str | None) -> int | None:
    """The newest run of the schedule that `by` asked for, for `reason`, still waiting or with
    its job queued or running."""
    return session.scalar(
        select(ScheduleRun.id)
        .outerjoin(Job, Job.id == ScheduleRun.job_id)
        .where(
            ScheduleRun.schedule_id == schedule_id,
            ScheduleRun.reason == reason,
            ScheduleRun.requested_by == by,
            or_(ScheduleRun.state == WAITING, Job.state.in_(ACTIVE)),
        )
        .order_by(ScheduleRun.id.desc())
        .limit(1)
    )


def _read_requested(session: Session, recorded: Requested) -> Requested:
    run = session.get(ScheduleRun, recorded.run_id)
    assert run is not None
    return replace(recorded, job_id=run.job_id, waiting_for=run.waiting_for)


def answer_run_request(repo: str, name: str, by: str | None, settings: Settings) -> str:
    """`@bot run <schedule>` on `repo` (its sender may push there): start it, and say so."""
    # Here, not at the top: replies loads the agent's LLM client, which the beat never needs.
    from resolver.callbacks.record import job_url

    try:
        requested = run_now(name, repo, COMMENT, by, settings)
    except ScheduleNotFoundError:
        known = in_transaction(_names_of, repo)
        return (
            f"This repository has no schedule named `{name}`; its schedules are: {known}. "
            "(To ask for work rather than a schedule, write the request as a sentence.)"
        )
    except ScheduleError as error:
        return f"I cannot run schedule `{name}`: {error}."
    if requested.job_id is None:
        why = requested.waiting_for or "the next tick of the scheduler"
        return f"Queued a run of schedule `{name}`: it waits for {why}, then starts by itself."
    return (
        f"Started a run of schedule `{name}` ([job {requested.job_id}]"
        f"({job_url(requested.job_id, settings)})). If it changes anything, it opens or updates "
        "the schedule's pull request."
    )


def _names_of(session: Session, repo: str) -> str:
    return names(schedules_of(session, repo))
