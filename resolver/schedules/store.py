"""Schedules and the repositories they belong to, in the database; and the stage's unit of
work (`in_transaction`), the one place the schedules open a transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from integrations.registry import parse_repo_spec
from resolver.contract.errors import RouteError
from resolver.schedules.spec import FILE_PATH, ScheduleError, ScheduleFile, ScheduleSpec
from resolver.store.db import session_scope
from resolver.store.models import Schedule, ScheduleRepo, utcnow

P = ParamSpec("P")
T = TypeVar("T")

SERVICE = "service"
FILE = "file"
_SPEC_FIELDS = tuple(f.name for f in fields(ScheduleSpec) if f.name != "name")


class ScheduleNotFoundError(ScheduleError):
    """No schedule has that name (in that repository)."""


def in_transaction(
    work: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """`work(session, ...)` in one transaction of its own, committed when it returns and rolled
    back when it raises. A stage entry (the tick, a sync, a run, `@bot run`) calls this once
    per step and makes its network calls between steps, never inside one; `work` returns plain
    values, not rows to read after it."""
    with session_scope() as session:
        return work(session, *args, **kwargs)


def normal_repo(spec: str) -> str:
    """`owner/name`, `github:owner/name` or `gitlab:group/project` as `forge:name`."""
    try:
        forge, name = parse_repo_spec(spec)
    except RouteError as error:
        raise ScheduleError(str(error)) from None
    return f"{forge}:{name}"


def repository(
    session: Session,
    repo: str,
    *,
    installation_id: int | None = None,
    user_id: int | None = None,
) -> ScheduleRepo:
    """The repository's row, created on first use; who runs act as is updated when given."""
    name = normal_repo(repo)
    row = session.scalar(select(ScheduleRepo).where(ScheduleRepo.repo == name))
    if row is None:
        row = ScheduleRepo(repo=name, file_limits={})
        session.add(row)
    if installation_id is not None:
        row.installation_id = installation_id
    if user_id is not None:
        row.user_id = user_id
    session.flush()
    return row


def add_schedule(
    session: Session, repo: ScheduleRepo, spec: ScheduleSpec, origin: str = SERVICE
) -> Schedule:
    """A new schedule; its first slot is the first one after now."""
    taken = session.scalar(
        select(Schedule.id).where(Schedule.repo_id == repo.id, Schedule.name == spec.name)
    )
    if taken is not None:
        raise ScheduleError(f"{repo.repo} already has a schedule named {spec.name!r}")
    schedule = Schedule(repo_id=repo.id, name=spec.name, origin=origin, enabled=True)
    schedule.repository = repo
    apply_spec(schedule, spec)
    session.add(schedule)
    session.flush()
    return schedule


def apply_spec(schedule: Schedule, spec: ScheduleSpec) -> None:
    """Give the schedule the spec's values. A new time counts from now: changing `cron` never
    starts a run for a slot the old time did not have."""
    moved = (schedule.cron, schedule.timezone) != (spec.cron, spec.timezone)
    for name in _SPEC_FIELDS:
        setattr(schedule, name, getattr(spec, name))
    if moved and schedule.id is not None:
        schedule.last_due_at = utcnow()


def find_schedule(session: Session, name: str, repo: str | None = None) -> Schedule:
    """The schedule called `name` (in `repo`, which may be left out when the name is unique)."""
    query = select(Schedule).join(ScheduleRepo).where(Schedule.name == name)
    if repo is not None:
        query = query.where(ScheduleRepo.repo == normal_repo(repo))
    found = list(session.scalars(query))
    if not found:
        where = f" on {normal_repo(repo)}" if repo else ""
        raise ScheduleNotFoundError(f"no schedule named {name!r}{where}")
    if len(found) > 1:
        repos = ", ".join(sorted(s.repository.repo for s in found))
        raise ScheduleError(f"several repositories have a schedule {name!r} ({repos}): name one")
    return found[0]


def schedules_of(session: Session, repo: str) -> list[Schedule]:
    return list(
        session.scalars(
            select(Schedule)
            .join(ScheduleRepo)
            .where(ScheduleRepo.repo == normal_repo(repo), Schedule.enabled)
            .order_by(Schedule.name)
        )
    )


def all_schedules(session: Session) -> list[Schedule]:
    return list(
        session.scalars(
            select(Schedule).join(ScheduleRepo).order_by(ScheduleRepo.repo, Schedule.name)
        )
    )


def remove_schedule(session: Session, schedule: Schedule) -> None:
    """Delete a schedule and its history; one from the repository's file is removed there."""
    if schedule.origin == FILE:
        raise ScheduleError(
            f"{schedule.name!r} comes from {FILE_PATH} in {schedule.repository.repo}: "
            "remove it from that file"
        )
    session.delete(schedule)


def apply_file(session: Session, repo: ScheduleRepo, parsed: ScheduleFile) -> list[str]:
    """Make the repository's file schedules what its `.resolver/schedules.yml` says.

    A schedule dropped from the file is disabled (its history stays); a name the service
    already uses for a schedule of its own is left to that one. Returns what changed.
    """
    existing = {
        s.name: s for s in session.scalars(select(Schedule).where(Schedule.repo_id == repo.id))
    }
    changes: list[str] = []
    for spec in parsed.schedules:
        schedule = existing.get(spec.name)
        if schedule is None:
            add_schedule(session, repo, spec, FILE)
            changes.append(f"added {spec.name}")
        elif schedule.origin == SERVICE:
            changes.append(f"ignored {spec.name}: the service has a schedule of that name")
        elif _differs(schedule, spec) or not schedule.enabled:
            apply_spec(schedule, spec)
            schedule.enabled = True
            changes.append(f"updated {spec.name}")
    named = {spec.name for spec in parsed.schedules}
    for schedule in existing.values():
        if schedule.origin == FILE and schedule.enabled and schedule.name not in named:
            schedule.enabled = False
            changes.append(f"disabled {schedule.name}")
    repo.file_limits = dict(parsed.limits)
    repo.synced_at, repo.sync_error = utcnow(), None
    return changes


def _differs(schedule: Schedule, spec: ScheduleSpec) -> bool:
    return any(getattr(schedule, name) != getattr(spec, name) for name in _SPEC_FIELDS)


def names(schedules: Sequence[Schedule]) -> str:
    return ", ".join(f"`{s.name}`" for s in schedules) or "none"
