"""`/schedules`: each schedule the viewer may see, its next run and its last runs, and "Run
now" for those who may push to its repository."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from resolver.contract.signin import NO_ACCESS, ForgeUnreachableError, RepoAccess, SignInError
from resolver.schedules import asked, cron, queue
from resolver.schedules.history import RunRow, history
from resolver.schedules.spec import ScheduleError
from resolver.schedules.store import FILE, all_schedules
from resolver.store.db import end_step
from resolver.store.models import Schedule, utcnow
from resolver.web.access import Viewer, pair_repository
from resolver.web.actions import checked_viewer, link_first
from resolver.web.context import (
    Web,
    current_viewer,
    in_transaction,
    not_found,
    page,
    signed_out,
    to_signin,
    unreachable,
    web_of,
)
from resolver.web.inputs import path_id

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

RUNS_SHOWN = 5


@dataclass(frozen=True)
class Item:
    schedule: Schedule
    repo: str
    next_run: str
    runs: list[RunRow]
    may_run: bool
    sync_error: str | None
    """Why its repository's schedules file could not be read last time (a file schedule)."""


def _access(viewer: Viewer, schedule: Schedule, web: Web) -> RepoAccess:
    if viewer.admin:
        return RepoAccess(read=True, push=True)
    where = pair_repository("schedule", schedule.repository.repo)
    return NO_ACCESS if where is None else web.cache.access(viewer, *where, web.settings)


def _next_run(schedule: Schedule) -> str:
    if not schedule.enabled:
        return ""
    due = cron.next_due(schedule.cron, schedule.timezone, utcnow())
    return due.strftime("%Y-%m-%d %H:%M UTC")


async def schedules_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    web = web_of(request)

    def load(session: Session) -> list[Item]:
        items = []
        for schedule in all_schedules(session):
            access = _access(viewer, schedule, web)
            if access.read:
                runs = history(session, schedule, RUNS_SHOWN)
                repo = schedule.repository
                unread = repo.sync_error if schedule.origin == FILE else None
                next_run = _next_run(schedule)
                items.append(Item(schedule, repo.repo, next_run, runs, access.push, unread))
        session.expunge_all()
        return items

    try:
        items = await in_transaction(load)
    except SignInError:
        return await signed_out(request)
    except ForgeUnreachableError as error:
        return unreachable(request, viewer, error)
    return page(request, "schedules.html", viewer, items=items)


def _already(requested: asked.Requested) -> str:
    """A second press of "Run now" while the run of the first still waits or runs."""
    if requested.job_id is None:
        where = f"it still waits for {requested.waiting_for or 'a free slot'}"
    else:
        where = f"it is job {requested.job_id}, which has not ended yet"
    asked = f"You already asked for run {requested.run_id} of {requested.schedule}"
    return f"{asked}, and {where}: nothing new was recorded."


async def run_now(request: Request) -> Response:
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    viewer, web = checked, web_of(request)
    schedule_id = path_id(request, "schedule_id")

    def act(session: Session) -> str | None:
        schedule = None if schedule_id is None else session.get(Schedule, schedule_id)
        if schedule is None:
            return None
        access = _access(viewer, schedule, web)
        name, repo = schedule.name, schedule.repository.repo
        end_step(session)
        if not access.read:
            return None
        if not access.push:
            return f"Only someone who can push to {repo} may run {name} now."
        if viewer.name is None:
            return link_first(viewer, web.settings.bot_name)
        try:
            # The run is recorded as the viewer's, by their Resolver user; the job runs as the
            # schedule's, as its cron runs do.
            requested = asked.run_now(
                name, repo, queue.MANUAL, viewer.name, web.settings, once=True
            )
        except ScheduleError as error:
            return str(error)
        if requested.already:
            return _already(requested)
        if requested.job_id is None:
            waits = requested.waiting_for or "a free slot"
            return f"Run {requested.run_id} of {name} waits for {waits}."
        return f"Run {requested.run_id} of {name} started as job {requested.job_id}."

    try:
        message: Any = await in_transaction(act)
    except SignInError:
        return await signed_out(request)
    except ForgeUnreachableError as error:
        message = f"{error}; nothing changed."
    if message is None:
        return not_found(request, viewer)
    request.session["flash"] = message
    return RedirectResponse("/schedules", status_code=303)
