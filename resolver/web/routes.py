"""The web app's routes and the middleware they need, mounted by `resolver.app`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from resolver.core.settings import Settings
from resolver.web import (
    actions,
    api,
    linking,
    links,
    live,
    mcp_credentials,
    operator,
    proofs,
    schedules,
    setup,
    setup_providers,
    signin,
)
from resolver.web import pages as pages_
from resolver.web.context import HERE, Web
from resolver.web.guard import FormLimit, SecurityHeaders
from resolver.web.session import middleware_options

Endpoint = Callable[[Request], Awaitable[Response]]


async def home(_request: Request) -> Response:
    return RedirectResponse("/jobs", status_code=303)


def web_routes(settings: Settings) -> list[BaseRoute]:
    """The pages and the JSON API, each behind the session cookie (the webhook routes are
    not: a route's own middleware keeps the cookie off them, and their 405s stay 405s). A
    form's size is checked before the session is read."""
    session = [
        Middleware(FormLimit),
        Middleware(SessionMiddleware, **middleware_options(settings)),
    ]
    pages: list[tuple[str, Endpoint, list[str]]] = [
        ("/", home, ["GET"]),
        ("/signin", signin.signin_page, ["GET"]),
        ("/signin/{forge}", signin.start, ["GET"]),
        ("/signin/{forge}/done", signin.done, ["GET"]),
        ("/signout", signin.signout, ["POST"]),
        ("/jobs", pages_.jobs_page, ["GET"]),
        ("/jobs/{job_id}", pages_.job_page, ["GET"]),
        ("/jobs/{job_id}/events", live.job_events, ["GET"]),
        ("/jobs/{job_id}/stop", actions.stop, ["POST"]),
        ("/jobs/{job_id}/rerun", actions.rerun, ["POST"]),
        ("/schedules", schedules.schedules_page, ["GET"]),
        ("/schedules/{schedule_id}/run", schedules.run_now, ["POST"]),
        ("/admin", pages_.admin_page, ["GET"]),
        ("/setup/start/{token}", operator.start, ["GET"]),
        ("/admin/links/{identity_id}/revoke", links.revoke, ["POST"]),
        ("/admin/users/{user_id}/forget", links.forget_person, ["POST"]),
        ("/admin/mcp", mcp_credentials.set_credential, ["POST"]),
        ("/admin/mcp/remove", mcp_credentials.remove_credential, ["POST"]),
        ("/setup", setup.setup_page, ["GET"]),
        ("/setup/checks", setup.checks, ["POST"]),
        *setup_providers.pages(),
        ("/link/{token}", linking.link_page, ["GET"]),
        ("/link/{token}", linking.link, ["POST"]),
        ("/link/{token}/prove", proofs.start, ["GET"]),
        ("/prove/{provider}/done", proofs.done, ["GET"]),
        ("/me", linking.me_page, ["GET"]),
        ("/me/unlink/{identity_id}", linking.unlink, ["POST"]),
        ("/me/signout-everywhere", signin.signout_everywhere, ["POST"]),
        ("/api/jobs", api.list_jobs, ["GET"]),
        ("/api/jobs/{job_id}", api.show_job, ["GET"]),
    ]
    routes: list[BaseRoute] = [
        Route(path, endpoint, methods=methods, middleware=session)
        for path, endpoint, methods in pages
    ]
    routes.append(Mount("/static", StaticFiles(directory=HERE / "static"), name="static"))
    return routes


def web_middleware(settings: Settings, webhooks: str) -> list[Middleware]:
    """The security headers, on every response but those under `webhooks`."""
    targets = setup.form_targets(settings)
    return [
        Middleware(
            SecurityHeaders, public_url=settings.public_url, setup_targets=targets, skip=webhooks
        )
    ]


def install(app: Starlette, settings: Settings) -> None:
    """What the web app's handlers find on `request.app`."""
    app.state.web = Web()
    app.state.oauth = signin.OAuthClients(signin.sign_in_clients, settings)
    app.state.proofs = signin.OAuthClients(proofs.proof_clients, settings)
