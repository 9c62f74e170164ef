"""The pages people read: the jobs they may see, one job as it runs, and the admin's view."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from integrations import registry
from resolver.broker import locks
from resolver.broker.outbox import queue_lengths
from resolver.callbacks.record import pull_word
from resolver.contract.outbound import THREAD_REPLY
from resolver.contract.results import JobResult, ResultError, read_result
from resolver.contract.signin import ForgeUnreachableError, SignInError
from resolver.contract.triggers import read_trigger
from resolver.core import budgets as caps
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.core.states import JobState, is_terminal
from resolver.features.review_requests.contract import read_review
from resolver.store import accounts, browse, jobs
from resolver.store import budgets as spend
from resolver.store.callbacks import failures_of
from resolver.store.mcp_credentials import list_mcp_credentials
from resolver.store.models import Job, utcnow
from resolver.web import steps
from resolver.web.access import AccessCache, Viewer, can_act, can_see, visible_to
from resolver.web.context import (
    Web,
    bad_request,
    current_viewer,
    in_transaction,
    not_found,
    page,
    signed_out,
    to_signin,
    unreachable,
    web_of,
)
from resolver.web.inputs import BadQueryError, path_id, query_id

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

PAGE_SIZE = 50
FILTERS = ("state", "source", "repo", "requester", "schedule")


@dataclass(frozen=True)
class Row:
    job: Job
    took: str
    cost: str
    pull_word: str
    answer: str | None


def _filters(request: Request) -> browse.JobFilter:
    values = {name: request.query_params.get(name, "").strip()[:300] for name in FILTERS}
    return browse.JobFilter(**values)


def list_rows(
    session: Session,
    viewer: Viewer,
    cache: AccessCache,
    settings: Settings,
    wanted: browse.JobFilter,
    before: int | None,
) -> tuple[list[Job], int | None]:
    """A page of the jobs `viewer` may see, and where the next (older) page starts: the last
    row read, not the last shown, so a page whose rows were all hidden still leads on."""
    visible = visible_to(session, viewer, cache, settings)
    found = browse.page_of_jobs(session, wanted, visible, before=before, size=PAGE_SIZE)
    read = found[:PAGE_SIZE]
    older = read[-1].id if len(found) > PAGE_SIZE else None
    shown = read
    if visible is not None:  # the query's repository test is coarse; each job's is exact
        shown = [job for job in read if can_see(viewer, job, cache, settings)]
    return shown, older


def _row(job: Job, now: Any) -> Row:
    trigger = read_trigger(job.trigger)
    provider = trigger.planned.provider if trigger.planned else job.source
    answer = trigger.url if job.outcome == "answered" else None
    return Row(
        job=job,
        took=steps.duration(job.started_at, job.finished_at, now),
        cost=steps.money(job.cost_usd),
        pull_word=pull_word(provider),
        answer=str(answer) if answer else None,
    )


async def jobs_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    web = web_of(request)
    try:
        wanted, before = _filters(request), query_id(request, "before")
    except BadQueryError as error:
        return bad_request(request, viewer, str(error))

    def load(session: Session) -> dict[str, Any]:
        shown, cursor = list_rows(session, viewer, web.cache, web.settings, wanted, before)
        now = utcnow()
        rows = [_row(job, now) for job in shown]
        session.expunge_all()
        query = {k: v for k, v in vars(wanted).items() if v}
        older = f"/jobs?{urlencode({**query, 'before': cursor})}" if cursor is not None else ""
        newer = f"/jobs?{urlencode(query)}" if before is not None else ""
        return {"rows": rows, "older": older, "newer": newer}

    try:
        values = await in_transaction(load)
    except SignInError:
        return await signed_out(request)
    except ForgeUnreachableError as error:
        return unreachable(request, viewer, error)
    return page(
        request,
        "jobs.html",
        viewer,
        filters=wanted,
        filtering=any(vars(wanted).values()),
        states=[state.value for state in JobState],
        sources=[*registry.names(), "schedule", "cli"],
        **values,
    )


def job_history(job: Job) -> list[tuple[str, str]]:
    """The job's life as the row records it."""

    def at(value: Any) -> str:
        return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else ""

    history = [(at(job.created_at), "asked for")]
    if job.started_at:
        history.append((at(job.started_at), "started"))
    stopper = shown_result(job)[0].stopped_by
    if stopper:
        history.append(("", f"{stopper} asked it to stop"))
    if job.finished_at:
        history.append((at(job.finished_at), f"{job.state} ({job.outcome or 'no outcome'})"))
    if job.attempts > 1:
        history.append(("", f"{job.attempts} attempts"))
    return history


def thread_failures(session: Session, job_id: int) -> list[tuple[str, str]]:
    """A review batch's thread replies that failed (or a thread left unresolved), and why."""
    return [
        (when.strftime("%Y-%m-%d %H:%M:%S UTC"), f"review thread: {error}")
        for when, error in failures_of(session, job_id, THREAD_REPLY)
    ]


def job_values(session: Session, job: Job, viewer: Viewer, web: Web) -> dict[str, Any]:
    """Everything the job page and its live header show."""
    result, unreadable = shown_result(job)
    planned = read_trigger(job.trigger).planned
    provider = planned.provider if planned else job.source
    return {
        "job": job,
        "steps": jobs.count_steps(session, job.id),
        "took": steps.duration(job.started_at, job.finished_at, utcnow()),
        "cost": steps.money(job.cost_usd),
        "summary": result.summary or "",
        "unreadable": unreadable,
        "plain_error": steps.plain_error(job.state, job.outcome),
        "pull_word": pull_word(provider),
        "may_act": can_act(viewer, job, web.cache, web.settings),
        "rerunnable": is_terminal(JobState(job.state)) and job.source != "schedule",
    }


def shown_result(job: Job) -> tuple[JobResult, str | None]:
    """The job's result as its page shows it; one that does not read shows as empty, with
    why (the fields at fault, never their values), and the rest of the page as ever."""
    try:
        return read_result(job.result), None
    except ResultError as error:
        log(logger, logging.WARNING, "web.result_unreadable", job=job.id, error=str(error))
        return JobResult(), f"Its recorded result does not read ({error})."


def shown_review(result: JobResult) -> dict[str, Any] | None:
    """A review job's review, each comment beside the diff's lines around it."""
    review = read_review(result.review)
    if review is None:
        return None
    rows = review.excerpts or ((),) * len(review.comments)
    return {**vars(review), "shown": list(zip(review.comments, rows, strict=False))}


def load_visible_job(session: Session, request: Request, viewer: Viewer) -> Job | None:
    web = web_of(request)
    job_id = path_id(request, "job_id")
    job = None if job_id is None else session.get(Job, job_id)
    if job is None or not can_see(viewer, job, web.cache, web.settings):
        return None
    return job


async def job_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    web = web_of(request)

    def load(session: Session) -> dict[str, Any] | None:
        job = load_visible_job(session, request, viewer)
        if job is None:
            return None
        events = browse.events_after(session, job.id, 0, limit=100_000)
        shown = steps.shown_events(events)
        blocks = [steps.block_of(e.seq, e.kind, e.payload, e.created_at) for e in shown]
        values = job_values(session, job, viewer, web)
        trigger = read_trigger(job.trigger)
        found = registry.find(job.source)
        values.update(
            blocks=[block for block in blocks if block is not None],
            last_seq=events[-1].seq if events else 0,
            history=job_history(job) + thread_failures(session, job.id),
            live=not is_terminal(JobState(job.state)),
            source_url=trigger.url,
            source_name=found.display_name if found else job.source,
            rerun_of=trigger.origin.rerun_of,
            review=shown_review(shown_result(job)[0]),
        )
        session.expunge_all()
        return values

    try:
        values = await in_transaction(load)
    except SignInError:
        return await signed_out(request)
    except ForgeUnreachableError as error:
        return unreachable(request, viewer, error)
    if values is None:
        return not_found(request, viewer)
    return page(request, "job.html", viewer, **values)


async def admin_page(request: Request) -> Response:
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    if not viewer.admin:
        return not_found(request, viewer)
    settings = web_of(request).settings

    def load(session: Session) -> dict[str, Any]:
        try:
            queues: dict[str, int] | None = queue_lengths(settings.redis_url)
        except locks.BrokerError:
            queues = None
        now = utcnow()
        oldest = {
            name: steps.duration(when, now, now) + " ago"
            for name, when in jobs.oldest_waiting(session).items()
        }
        values = {
            "queues": queues,
            "oldest": oldest,
            "users": browse.users(session),
            "links": accounts.links(session, now),
            "tokens": browse.tokens(session),
            "mcp": list_mcp_credentials(session),
            "routes": browse.routes(session),
            "running": browse.count_in_state(session, JobState.RUNNING),
            "queued": browse.count_in_state(session, JobState.QUEUED),
            "budgets": _budget_rows(session, now, settings),
        }
        session.expunge_all()
        return values

    return page(request, "admin.html", viewer, **await in_transaction(load))


def _budget_rows(session: Session, now: datetime, settings: Settings) -> list[dict[str, Any]]:
    """The admin page's lines of `resolver budgets`."""
    return [
        {
            "budget": caps.label(line.cap),
            "who": line.who,
            "spent": caps.money(line.cap.unit, line.spent),
            "cap": caps.money(line.cap.unit, line.cap.limit),
            "full": line.spent >= line.cap.limit,
            "resets": line.resets_at.strftime("%Y-%m-%d %H:%M UTC"),
        }
        for line in spend.overview(session, caps.caps_from(settings), now)
    ]
