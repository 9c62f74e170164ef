"""The JSON API (`/api/jobs`): the same jobs as the pages, for a signed-in session, and every
job for the admin's bearer token (scripts)."""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from resolver.contract.signin import ForgeUnreachableError, SignInError
from resolver.core.logs import redact_value
from resolver.store.browse import JobFilter
from resolver.store.jobs import job_to_dict, recent_jobs
from resolver.store.models import Job
from resolver.web import steps
from resolver.web.access import Viewer
from resolver.web.context import Web, current_viewer, end_everywhere, in_transaction, web_of
from resolver.web.inputs import BadQueryError, parse_id, path_id, query_id
from resolver.web.pages import list_rows, load_visible_job

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def bearer_ok(request: Request) -> bool:
    token = web_of(request).settings.admin_token
    header = request.headers.get("authorization", "")
    if token is None or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(header[7:].encode(), token.get_secret_value().encode())


async def _who(request: Request) -> Viewer | Response | None:
    """None for the admin's token, the viewer of a session, or the 401 to answer."""
    if bearer_ok(request):
        return None
    viewer = await current_viewer(request)
    if viewer is None:
        return JSONResponse({"error": "unauthorized"}, status_code=401)
    return viewer


def _limit(request: Request) -> int | None:
    found = parse_id(request.query_params.get("limit", "100"))
    return None if found is None else min(max(found, 1), 1000)


async def list_jobs(request: Request) -> Response:
    who = await _who(request)
    if isinstance(who, Response):
        return who
    limit = _limit(request)
    if limit is None:
        return JSONResponse({"error": "limit must be an integer"}, status_code=400)
    try:
        before = query_id(request, "before")
    except BadQueryError as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    web = web_of(request)

    def load(session: Session) -> list[dict[str, Any]]:
        if who is None:
            rows: list[Job] = list(recent_jobs(session, limit, before))
        else:
            rows = _visible(session, who, web, limit, before)
        return [_shown(job_to_dict(job)) for job in rows]

    return await _answer(who, load)


def _visible(session: Session, who: Viewer, web: Web, limit: int, before: int | None) -> list[Job]:
    """Up to `limit` of the jobs `who` may see, newest first, older than `before`: page after
    page of the job list, as many as it takes."""
    rows: list[Job] = []
    while len(rows) < limit:
        shown, before = list_rows(session, who, web.cache, web.settings, JobFilter(), before)
        rows += shown
        if before is None:
            break
    return rows[:limit]


async def show_job(request: Request) -> Response:
    who = await _who(request)
    if isinstance(who, Response):
        return who
    job_id = path_id(request, "job_id")

    def load(session: Session) -> dict[str, Any] | None:
        if who is None:
            job = None if job_id is None else session.get(Job, job_id)
        else:
            job = load_visible_job(session, request, who)
        if job is None:
            return None
        return _shown(job_to_dict(job, steps.shown_events(job.events)))

    return await _answer(who, load)


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    """Masked as the pages mask what they print (`context._finalize`)."""
    masked = redact_value(data)
    assert isinstance(masked, dict)
    return masked


async def _answer(who: Viewer | None, load: Any) -> Response:
    try:
        found = await in_transaction(load)
    except SignInError:
        if who is not None:  # the forge refused their token: every session of theirs ends
            await end_everywhere(who.person)
        return JSONResponse({"error": "sign in again"}, status_code=401)
    except ForgeUnreachableError as error:
        return JSONResponse({"error": str(error)}, status_code=503)
    if found is None:
        return JSONResponse({"error": "no such job"}, status_code=404)
    return JSONResponse(found)
