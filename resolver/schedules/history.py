"""What a schedule's runs did, for `resolver schedules history` and `list`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from resolver.contract.results import ResultError, ScheduleDetails, read_result
from resolver.core.states import JobState, Outcome
from resolver.schedules.decide import Action
from resolver.schedules.queue import WAITING
from resolver.store.models import Job, Schedule, ScheduleRun


@dataclass(frozen=True)
class RunRow:
    """One run: when it was due, why it ran, when it ran, what it did, its PR and cost."""

    id: int
    due_at: datetime
    reason: str
    requested_by: str | None
    started_at: datetime | None
    job_id: int | None
    did: str
    pr_url: str | None
    cost_usd: float | None


def history(session: Session, schedule: Schedule, limit: int = 20) -> list[RunRow]:
    """The schedule's newest runs, newest first."""
    rows = session.execute(
        select(ScheduleRun, Job)
        .outerjoin(Job, Job.id == ScheduleRun.job_id)
        .where(ScheduleRun.schedule_id == schedule.id)
        .order_by(ScheduleRun.id.desc())
        .limit(limit)
    ).all()
    return [
        RunRow(
            id=run.id,
            due_at=run.due_at,
            reason=run.reason,
            requested_by=run.requested_by,
            started_at=job.started_at if job else None,
            job_id=run.job_id,
            did=describe(run.state, run.waiting_for, _facts(job)),
            pr_url=job.pr_url if job else None,
            cost_usd=job.cost_usd if job else None,
        )
        for run, job in rows
    ]


def waiting_counts(session: Session) -> dict[int, int]:
    """Per schedule id, how many of its runs wait for a limit."""
    rows = session.execute(
        select(ScheduleRun.schedule_id, func.count(ScheduleRun.id))
        .where(ScheduleRun.state == WAITING)
        .group_by(ScheduleRun.schedule_id)
    ).all()
    return {schedule_id: int(count) for schedule_id, count in rows}


@dataclass(frozen=True)
class JobFacts:
    state: str
    outcome: str | None
    action: str | None
    error: str | None
    has_pull: bool
    diff_lines: int


def _facts(job: Job | None) -> JobFacts | None:
    if job is None:
        return None
    try:
        details = read_result(job.result).schedule or ScheduleDetails()
    except ResultError:  # the job's own page says why; a run's line shows what the row does
        details = ScheduleDetails()
    diff = details.diff or ""
    changed = [
        line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    return JobFacts(
        state=job.state,
        outcome=job.outcome,
        action=details.action,
        error=job.error,
        has_pull=bool(job.pr_url),
        diff_lines=len(changed),
    )


_SKIPS = {
    Action.SKIP_EDITED: "skipped: someone else pushed to its pull request's branch",
    Action.SKIP_DECLINED: "skipped: its pull request was closed unmerged; nothing changed since",
    "tests_pass": "skipped: the tests pass",
}


def describe(state: str, waiting_for: str | None, job: JobFacts | None) -> str:
    """One line on what a run did (or why it has not started). Pure."""
    if state == WAITING or job is None:
        return f"waiting for {waiting_for or 'the scheduler'}"
    if job.state in (JobState.QUEUED, JobState.RUNNING):
        return str(job.state)
    if job.action in _SKIPS:
        return _SKIPS[job.action]
    if job.state == JobState.CANCELLED:
        return "cancelled"
    if job.state == JobState.FAILED:
        return f"failed: {(job.error or 'no reason recorded').splitlines()[0][:120]}"
    if job.action == "dry_run":
        if job.outcome == Outcome.CHANGED_CODE:
            return f"dry run: would have proposed {job.diff_lines} changed lines"
        return "dry run: no changes"
    if job.outcome == Outcome.CHANGED_CODE:
        if job.action == Action.UPDATE:
            return "updated its pull request"
        return "opened a pull request" if job.has_pull else "pushed a branch"
    return "no changes"
