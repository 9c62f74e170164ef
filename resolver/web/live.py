"""A running job's page, kept current: server-sent events carry each new trajectory entry and
the job's header as HTML the page inserts. Each event's id is the entry's `seq`, so a browser
that reconnects (EventSource sends `Last-Event-ID`) resumes where it left off."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from resolver.core.states import JobState, is_terminal
from resolver.store import browse, web_sessions
from resolver.store.models import utcnow
from resolver.web import steps
from resolver.web.context import Web, current_viewer, in_transaction, web_of
from resolver.web.inputs import parse_id
from resolver.web.pages import job_values, load_visible_job
from resolver.web.session import csrf_token, lifetimes, session_key

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

POLL_SECONDS = 0.5
# A stream ends after this long; the browser reconnects and resumes from its last event.
STREAM_SECONDS = 300.0


def _after(request: Request) -> int | None:
    """Where the stream resumes: the last event the browser has; None when that is no id."""
    return parse_id(request.headers.get("last-event-id") or request.query_params.get("after", "0"))


def _event(name: str, html: str, event_id: int | None = None) -> str:
    lines = [f"event: {name}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines += [f"data: {line}" for line in html.splitlines() or [""]]
    return "\n".join(lines) + "\n\n"


async def job_events(request: Request) -> Response:
    found = await current_viewer(request)
    if found is None:
        return Response("not found", status_code=404, media_type="text/plain")
    viewer, web = found, web_of(request)

    def visible(session: Session) -> bool:
        return load_visible_job(session, request, viewer) is not None

    if not await in_transaction(visible):
        return Response("not found", status_code=404, media_type="text/plain")
    start = _after(request)
    if start is None:
        return Response("after must be a number", status_code=400, media_type="text/plain")
    csrf, key = csrf_token(request), session_key(request)

    def poll(session: Session, after: int) -> tuple[list[str], int, bool] | None:
        """The events after `after` as SSE text, the last seq, and whether the job has ended;
        None once the viewer's session has ended (signed out, revoked, past a lifetime)."""
        if key is None or not _lives(session, key, web):
            return None
        job = load_visible_job(session, request, viewer)
        if job is None:
            return [], after, True
        out: list[str] = []
        events = browse.events_after(session, job.id, after)
        for event in steps.shown_events(events):
            block = steps.block_of(event.seq, event.kind, event.payload, event.created_at)
            if block is not None:
                out.append(_event("block", _render(web, "_block.html", block=block), event.seq))
        last = events[-1].seq if events else after
        ended = is_terminal(JobState(job.state))
        if out or ended:
            values = job_values(session, job, viewer, web)
            out.append(_event("head", _render(web, "_head.html", csrf=csrf, **values)))
        return out, last, ended

    async def stream() -> AsyncIterator[str]:
        after, deadline = start, time.monotonic() + STREAM_SECONDS
        yield "retry: 2000\n\n"
        while time.monotonic() < deadline and not await request.is_disconnected():
            polled = await in_transaction(poll, after)
            if polled is None:
                return  # the browser's reconnect then finds no session, and stops
            chunks, after, ended = polled
            for chunk in chunks:
                yield chunk
            if ended:
                yield _event("end", "")
                return
            await asyncio.sleep(POLL_SECONDS)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


def _lives(session: Session, key: str, web: Web) -> bool:
    now, spans = utcnow(), lifetimes(web.settings)
    return web_sessions.find(session, key, now, spans, seen=False) is not None


def _render(web: Web, name: str, **values: Any) -> str:
    return web.templates.get_template(name).render(**values)
