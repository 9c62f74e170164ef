"""The `/setup` buttons for Slack, GitLab, Jira and Linear: create and install the Slack app,
register each webhook, rotate its secret. Admins only; every POST carries the session's CSRF
token; each ends back on `/setup` with a line saying what happened (never a secret).

`PAGES` lists the routes as `web.routes` lists its own, for it to mount behind the session."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from integrations.slack import setup as slack
from resolver.contract.setup import SetupError
from resolver.core.logs import log
from resolver.core.settings import get_settings
from resolver.onboarding import hooks
from resolver.web.access import Viewer
from resolver.web.actions import checked_viewer
from resolver.web.context import current_viewer, page, to_signin
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


async def _admin_form(request: Request) -> tuple[Viewer, dict[str, str]] | Response:
    """The admin behind a valid form post and the form's text fields, or the answer to give."""
    checked = await checked_viewer(request)
    if isinstance(checked, Response):
        return checked
    if not checked.admin:
        return _forbidden(request, checked)
    form = await request.form()
    return checked, {k: v for k, v in form.items() if isinstance(v, str)}


async def _attempt(request: Request, viewer: Viewer, work: Callable[[], str]) -> Response:
    where = {"route": route_of(request), "provider": request.path_params.get("provider")}
    try:
        message = await run_in_threadpool(work)
    except SetupError as error:
        log(logger, logging.INFO, "web.setup_refused", **where, by=viewer.label)
        return _back(request, f"{error}. Nothing was changed.")
    log(logger, logging.INFO, "web.setup", **where, by=viewer.label)
    return _back(request, message)


async def slack_create(request: Request) -> Response:
    """Create the Slack app, then go straight to Slack to install it."""
    checked = await _admin_form(request)
    if isinstance(checked, Response):
        return checked
    viewer, form = checked
    token, refresh = form.get("config_token", ""), form.get("refresh_token") or None
    try:
        created = await run_in_threadpool(slack.create_app, token, refresh)
    except SetupError as error:
        return _back(request, f"{error}. Nothing was changed.")
    log(logger, logging.INFO, "web.setup_slack_created", app=created.app_id, by=viewer.label)
    return RedirectResponse(created.install_url, status_code=303)


async def slack_install(request: Request) -> Response:
    """Go to Slack to install the app created before."""
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    if not viewer.admin:
        return _forbidden(request, viewer)
    try:
        target = await run_in_threadpool(slack.install_url, get_settings())
    except SetupError as error:
        return _back(request, str(error))
    return RedirectResponse(target, status_code=303)


async def slack_installed(request: Request) -> Response:
    """Slack's redirect after the install: trade the code for the bot token."""
    viewer = await current_viewer(request)
    if viewer is None:
        return to_signin(request)
    if not viewer.admin:
        return _forbidden(request, viewer)
    params = request.query_params
    if params.get("error"):
        return _back(request, f"Slack did not install the app ({params['error'][:60]}).")

    def work() -> str:
        done = slack.finish_install(params.get("code", ""), params.get("state", ""))
        return f"Installed the Slack app in workspace {done.team_id}; its bot token is stored."

    return await _attempt(request, viewer, work)


async def register_hook(request: Request) -> Response:
    """`/setup/{provider}/hook`: register the provider's webhook."""
    return await _hook(request, rotate=False)


async def rotate(request: Request) -> Response:
    """`/setup/{provider}/rotate`: a new webhook secret (Slack: the pasted signing secret)."""
    return await _hook(request, rotate=True)


async def _hook(request: Request, *, rotate: bool) -> Response:
    checked = await _admin_form(request)
    if isinstance(checked, Response):
        return checked
    viewer, form = checked
    name = request.path_params["provider"]

    def work() -> str:
        if name == slack.PROVIDER and rotate:
            slack.rotate_signing_secret(form.get("signing_secret", ""))
            return "Stored the new Slack signing secret."
        if name not in hooks.webhook_setups():
            raise SetupError(f"Resolver cannot register a webhook on {name!r}")
        credential, scope = form.get("credential", ""), form.get("scope")
        done = hooks.register_hook(name, credential, scope, rotate=rotate)
        verb = "Rotated the secret of" if rotate else "Registered"
        tested = " A test delivery was requested." if done.tested else ""
        return f"{verb} the {name} webhook {done.hook_id} ({', '.join(done.events)}).{tested}"

    return await _attempt(request, viewer, work)


PAGES: Final[list[tuple[str, Endpoint, list[str]]]] = [
    ("/setup/slack/create", slack_create, ["POST"]),
    ("/setup/slack/install", slack_install, ["GET"]),
    ("/setup/slack/installed", slack_installed, ["GET"]),
    ("/setup/{provider}/hook", register_hook, ["POST"]),
    ("/setup/{provider}/rotate", rotate, ["POST"]),
]
"""The routes, for `web.routes.web_routes` to add to its `pages` (behind the session)."""
