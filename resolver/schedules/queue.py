"""Scheduled runs: recorded when due (once per slot), started as jobs when the limits allow.

A run is recorded with the unique key (schedule, due time), so two beat processes, or a
restarted one, record a slot once; only the process whose insert went in starts it. A run
over a limit stays `waiting`, with the limit it waits for, and starts on a later tick.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import Select, exists, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from integrations.registry import parse_repo_spec
from resolver.broker import locks
from resolver.contract import triggers
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.core.states import JobState
from resolver.schedules import limits
from resolver.schedules.cron import CronError, latest_due
from resolver.schedules.decide import OPEN
from resolver.schedules.spec import (
    CUSTOM,
    FIX_DEFAULT_BRANCH,
    UPDATE_DEPENDENCIES,
)
from resolver.schedules.store import (
    in_transaction,
)
from resolver.store import jobs
from resolver.store.models import (
    BotPull,
    Job,
    Schedule,
    ScheduleRepo,
    ScheduleRun,
    User,
    utcnow,
)

logger = logging.getLogger(__name__)

SOURCE: Final = "schedule"
WAITING: Final = "waiting"
STARTED: Final = "started"
CRON, MANUAL, COMMENT = "cron", "manual", "comment"
ACTIVE: Final = (JobState.QUEUED, JobState.RUNNING)
LOCK_SECONDS: Final = 60
LOCK_WAIT: Final = 10
TASK_TITLES: Final = {
    UPDATE_DEPENDENCIES: "update dependencies",
    FIX_DEFAULT_BRANCH: "fix the default branch",
}


# --- recording due runs


def record_due(session: Session, now: datetime) -> list[int]:
    """Record a run for every enabled schedule whose newest slot up to `now` has none yet.

    A schedule whose last cron run still waits for a limit gets no second one: that run will
    do the same work when it starts, as a run missed while the service was down is caught up
    once. Runs asked for by people are always recorded.
    """
    waiting = set(
        session.scalars(
            select(ScheduleRun.schedule_id).where(
                ScheduleRun.state == WAITING, ScheduleRun.reason == CRON
            )
        )
    )
    recorded: list[int] = []
    for schedule in session.scalars(select(Schedule).where(Schedule.enabled)):
        since = max(schedule.created_at, schedule.last_due_at or schedule.created_at)
        try:
            slot = latest_due(schedule.cron, schedule.timezone, since, now)
        except CronError as error:
            log(
                logger, logging.WARNING, "schedule.bad_cron", schedule=schedule.id, error=str(error)
            )
            continue
        if slot is None:
            continue
        if schedule.id not in waiting:
            run_id = insert_run(session, schedule.id, slot, CRON)
            recorded += [run_id] if run_id is not None else []
        # Forward only: another beat may have handled a newer slot meanwhile.
        session.execute(
            update(Schedule)
            .where(Schedule.id == schedule.id)
            .where(or_(Schedule.last_due_at.is_(None), Schedule.last_due_at < slot))
            .values(last_due_at=slot)
            .execution_options(synchronize_session=False)
        )
    return recorded


def insert_run(
    session: Session, schedule_id: int, due_at: datetime, reason: str, by: str | None = None
) -> int | None:
    """Insert the run of (schedule, due time) unless it exists; its id, or None if it did."""
    values = {
        "schedule_id": schedule_id,
        "due_at": due_at,
        "reason": reason,
        "requested_by": by,
        "state": WAITING,
        "created_at": utcnow(),
    }
    dialect = session.get_bind().dialect.name
    statement = _INSERT_ONCE.get(dialect, insert(ScheduleRun).returning(ScheduleRun.id))
    run_id = session.execute(statement, values).scalar()
    if run_id is not None:
        log(logger, logging.INFO, "schedule.run_recorded", schedule=schedule_id, run=run_id)
    return run_id


# ON CONFLICT DO NOTHING, per dialect (SQLite and PostgreSQL are the supported ones).
_INSERT_ONCE: dict[str, Any] = {
    "sqlite": sqlite.insert(ScheduleRun).on_conflict_do_nothing().returning(ScheduleRun.id),
    "postgresql": postgresql.insert(ScheduleRun).on_conflict_do_nothing().returning(ScheduleRun.id),
}


# --- starting runs within the limits


def start_waiting(session: Session, now: datetime, settings: Settings) -> list[int]:
    """Start waiting runs, oldest first, while the limits allow. Returns the new jobs' ids (to
    publish after the commit); a run left waiting notes the limit it waits for."""
    waiting = session.execute(
        select(ScheduleRun.id, ScheduleRun.schedule_id, ScheduleRun.waiting_for)
        .where(ScheduleRun.state == WAITING)
        .order_by(ScheduleRun.id)
    ).all()
    usage: dict[int | None, limits.Usage] = {}  # per repository id; None: the service

    def used(repo_id: int | None) -> limits.Usage:
        if repo_id not in usage:
            usage[repo_id] = _usage(session, now, repo_id)
        return usage[repo_id]

    started: list[int] = []
    for run_id, schedule_id, noted in waiting:
        schedule = session.get(Schedule, schedule_id)
        if schedule is None:
            continue
        reason = _held_by(schedule, used(schedule.repo_id), used(None), settings)
        if reason is not None:
            if reason != noted:
                _set_run(session, run_id, waiting_for=reason)
            continue
        job_id = _start(session, run_id, schedule, now)
        if job_id is not None:
            started.append(job_id)
            usage.clear()
    return started


def _held_by(
    schedule: Schedule, repo_usage: limits.Usage, service_usage: limits.Usage, settings: Settings
) -> str | None:
    repo = schedule.repository
    may_open = not schedule.dry_run and schedule.pull_state != OPEN
    defaults = limits.repo_defaults(settings)
    mine = limits.repo_limits(_operator_limits(repo), repo.file_limits or {}, defaults)
    return limits.blocking(mine, repo_usage, "the repository's", may_open) or limits.blocking(
        limits.service_limits(settings), service_usage, "the service's", may_open
    )


def _operator_limits(repo: ScheduleRepo) -> dict[str, int | None]:
    return {
        "runs_per_hour": repo.runs_per_hour,
        "concurrent_runs": repo.concurrent_runs,
        "open_prs": repo.open_prs,
    }


def _usage(session: Session, now: datetime, repo_id: int | None) -> limits.Usage:
    def count(query: Select[Any]) -> int:
        if repo_id is not None:
            query = query.where(Schedule.repo_id == repo_id)
        return int(session.scalar(query) or 0)

    runs = select(func.count(ScheduleRun.id)).join(Schedule)
    active = runs.join(Job, Job.id == ScheduleRun.job_id).where(Job.state.in_(ACTIVE))
    opening = active.where(Schedule.pull_state.is_distinct_from(OPEN), ~Schedule.dry_run)
    open_pulls = select(func.count(Schedule.id)).where(
        Schedule.pull_state == OPEN, ~_closed_since(Schedule)
    )
    hour_ago = now - timedelta(hours=1)
    return limits.Usage(
        runs_last_hour=count(runs.where(ScheduleRun.started_at > hour_ago)),
        running=count(active),
        open_prs=count(open_pulls) + count(opening),
    )


def _closed_since(schedule: type[Schedule]) -> Any:
    """The schedule's pull request was closed or merged since its run remembered it open: the
    record of the bot's pull requests (`store.bot_pulls`, kept from the forge's events) says so.
    Its next run finds out what became of it; until then it holds no other schedule back."""
    return (
        exists()
        .where(
            BotPull.closed.is_(True),
            BotPull.head == schedule.pull_branch,
            ScheduleRepo.id == schedule.repo_id,
            BotPull.forge + ":" + BotPull.repo == ScheduleRepo.repo,
        )
        .correlate(schedule)
    )


def _start(session: Session, run_id: int, schedule: Schedule, now: datetime) -> int | None:
    """Claim the waiting run (a racing starter finds it claimed) and create its job."""
    claimed = session.execute(
        update(ScheduleRun)
        .where(ScheduleRun.id == run_id, ScheduleRun.state == WAITING)
        .values(state=STARTED, started_at=now, waiting_for=None)
        .execution_options(synchronize_session=False)
    )
    if getattr(claimed, "rowcount", 0) != 1:
        return None
    job = jobs.create_job(session, _new_job(session, schedule, run_id))
    _set_run(session, run_id, job_id=job.id)
    log(logger, logging.INFO, "schedule.run_started", schedule=schedule.id, run=run_id, job=job.id)
    return job.id


def _set_run(session: Session, run_id: int, **values: Any) -> None:
    session.execute(
        update(ScheduleRun)
        .where(ScheduleRun.id == run_id)
        .values(**values)
        .execution_options(synchronize_session=False)
    )


def installation_reach(installation_id: int | None) -> triggers.JsonObject:
    """How the forge reaches a schedule's repository: the app installation it was followed
    through, kept on its row (the forge's own key, as its routes record it)."""
    return {} if installation_id is None else {"installation_id": installation_id}


def run_title(schedule: Schedule) -> str:
    """`weekly-deps: update dependencies`: the commit subject and the pull request's title."""
    if schedule.task == CUSTOM and schedule.prompt:
        what = schedule.prompt.strip().splitlines()[0][:80]
    else:
        what = TASK_TITLES.get(schedule.task, schedule.task)
    return f"{schedule.name}: {what}"


def _new_job(session: Session, schedule: Schedule, run_id: int) -> jobs.NewJob:
    repo = schedule.repository
    forge, full_name = parse_repo_spec(repo.repo)
    trigger = triggers.ScheduleRun(
        schedule_id=schedule.id,
        run_id=run_id,
        schedule=schedule.name,
        forge_name=forge,
        repo=full_name,
        title=run_title(schedule),
        reach=installation_reach(repo.installation_id),
    )
    owner = session.get(User, repo.user_id) if repo.user_id is not None else None
    return jobs.NewJob(
        source=SOURCE,
        task=run_title(schedule),
        repo=full_name,
        requester=owner.name if owner else None,
        requester_id=repo.user_id,
        trigger=triggers.dump_trigger(trigger),
        # Runs of one schedule take turns: a run waits for the one before it.
        conversation_key=f"{SOURCE}:{schedule.id}",
    )


# --- one step of the beat


@contextmanager
def admission_lock(redis_url: str, wait: float = LOCK_WAIT) -> Iterator[bool]:
    """One starter at a time, so two never both see room under a limit. The run's unique key,
    not this lock, is what keeps a slot from starting twice."""
    with locks.held(
        "resolver:schedules:admission", redis_url, timeout=LOCK_SECONDS, wait=wait
    ) as lock:
        yield lock.acquired


def publish_started(job_ids: list[int]) -> None:
    """Publish the jobs of started runs (after their commit); one that fails is republished by
    the reconciler."""
    from resolver.broker.outbox import publish_job  # loads Celery: only when something is published

    for job_id in job_ids:
        try:
            in_transaction(publish_job, job_id)
        except locks.BrokerError as error:
            log(logger, logging.WARNING, "schedule.publish_failed", job=job_id, error=repr(error))


def tick(settings: Settings, now: datetime | None = None) -> list[int]:
    """Record what is due and start what the limits allow. Returns the started jobs' ids."""
    now = now or utcnow()
    in_transaction(record_due, now)
    with admission_lock(settings.redis_url, wait=0) as held:
        if not held:
            return []  # another tick is starting runs right now
        started = in_transaction(start_waiting, now, settings)
    publish_started(started)
    return started
