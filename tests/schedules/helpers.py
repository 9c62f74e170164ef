"""Schedules in the test database, with a creation time in the past when a test needs one."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from resolver.schedules.spec import build_spec
from resolver.schedules.store import add_schedule, repository
from resolver.store.db import session_scope
from resolver.store.models import Job, Schedule, ScheduleRun


def make_schedule(
    name: str,
    repo: str = "octo/widgets",
    *,
    created_at: datetime | None = None,
    cron: str = "0 6 * * 1",
    timezone: str = "Europe/Berlin",
    **values: object,
) -> int:
    spec = build_spec(
        {"name": name, "cron": cron, "timezone": timezone, "prompt": "Tidy up.", **values}
    )
    with session_scope() as session:
        schedule = add_schedule(session, repository(session, repo), spec)
        if created_at is not None:
            schedule.created_at = created_at
        return schedule.id


def runs_of(schedule_id: int) -> list[ScheduleRun]:
    with session_scope() as session:
        found = list(
            session.scalars(
                select(ScheduleRun)
                .where(ScheduleRun.schedule_id == schedule_id)
                .order_by(ScheduleRun.id)
            )
        )
        session.expunge_all()
        return found


def schedule_jobs() -> list[Job]:
    with session_scope() as session:
        found = list(session.scalars(select(Job).where(Job.source == "schedule")))
        session.expunge_all()
        return found


def get_schedule(schedule_id: int) -> Schedule:
    with session_scope() as session:
        schedule = session.get(Schedule, schedule_id)
        assert schedule is not None
        session.expunge(schedule)
        return schedule
