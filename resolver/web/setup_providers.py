"""`/setup/{provider}/{action}`: each provider's buttons on /setup (its `WebAction`s, and the
webhook's where Resolver registers one). Admins only; every POST carries the session's CSRF
token; each ends back on `/setup` with a line saying what happened (never a secret), on the
provider's site, or on a page of the provider's own.

`pages()` lists the routes as `web.routes` lists its own, for it to mount behind the session."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations import registry
from resolver.contract.setup import ActionInput, Answer, Flash, GoTo, SetupError, WebAction
from resolver.core.logs import log
from resolver.onboarding.described import actions_of
from resolver.onboarding.store import VaultStore
from resolver.web.access import Viewer
from resolver.web.actions import checked_viewer
from resolver.web.context import current_viewer, not_found, page, to_signin, web_of
from resolver.web.inputs import route_of

logger = logging.getLogger(__name__)

SETUP_PATH: Final = "/setup"
Endpoint = Callable[[Request], Awaitable[Response]]


def _back(request: Request, message: str) -> Response:
    request.session["flash"] = message
    return RedirectResponse(SETUP_PATH, status_code=303)


def _forbidden(request: Request, viewer: Viewer) -> Response:
    message = "Only Resolver admins may set up providers."
    return page(request, "error.html", viewer, 403, heading="Admins only", message=message)


async def _admin(request: Request, action: WebAction) -> tuple[Viewer, dict[str, str]] | Response:
    """The admin behind the request and its text fields (a POST's form, checked for its CSRF
    token; a GET's query), or the answer to give."""
    if action.method == "POST":
        checked = await checked_viewer(request)
        if isinstance(checked, Response):
            return checked
        form = await request.form()
        viewer, given = checked, {k: v for k, v in form.items() if isinstance(v, str)}
    else:
        found = await current_viewer(request)
        if found is None:
            return to_signin(request)
        viewer, given = found, dict(request.query_params)
    if not viewer.admin:
        return not_found(request, viewer) if action.hidden else _forbidden(request, viewer)
    return viewer, given


def endpoint(name: str, action: WebAction) -> Endpoint:
    """`/setup/<name>/<action>`: the provider's action, run off the event loop (it calls the
    provider)."""

    async def act(request: Request) -> Response:
        checked = await _admin(request, action)
        if isinstance(checked, Response):
            return checked
        viewer, values = checked
        settings = web_of(request).settings
        store = VaultStore(settings)
        given = ActionInput(settings, store, values, request.session, time.time(), viewer.label)
        return await _answer(request, viewer, name, action, given)

    return act


async def _answer(
    request: Request, viewer: Viewer, name: str, action: WebAction, given: ActionInput
) -> Response:
    where = {"route": route_of(request), "provider": name}
    try:
        answer: Answer = await run_in_threadpool(action.run, given)
    except SetupError as error:
        log(logger, logging.INFO, "web.setup_refused", **where, by=viewer.label)
        return _back(request, f"{error}. Nothing was changed.")
    log(logger, logging.INFO, "web.setup", **where, action=action.name, by=viewer.label)
    if isinstance(answer, Flash):
        return _back(request, answer.message)
    if isinstance(answer, GoTo):
        return RedirectResponse(answer.url, status_code=303)
    return page(request, f"{name}/{answer.template}", viewer, 200, **answer.values)


def pages() -> list[tuple[str, Endpoint, list[str]]]:
    """The routes, for `web.routes.web_routes` to add to its `pages` (behind the session):
    `/setup/<provider>/<action>` for each installed provider's actions."""
    return [
        (
            f"{SETUP_PATH}/{provider.name}/{action.name}",
            endpoint(provider.name, action),
            [action.method],
        )
        for provider in registry.installed()
        for action in actions_of(provider)
    ]
