"""The web app's routes and the middleware they need, mounted by `resolver.app`."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from resolver.core.settings import Settings
from resolver.web import actions, api, live, pages, schedules, signin
from resolver.web.context import HERE, Web
from resolver.web.session import middleware_options


async def home(_request: Request) -> Response:
    return RedirectResponse("/jobs", status_code=303)


def web_routes() -> list[BaseRoute]:
    return [
        Route("/", home),
        Route("/signin", signin.signin_page),
        Route("/signin/{forge}", signin.start),
        Route("/signin/{forge}/done", signin.done),
        Route("/signout", signin.signout, methods=["POST"]),
        Route("/jobs", pages.jobs_page),
        Route("/jobs/{job_id}", pages.job_page),
        Route("/jobs/{job_id}/events", live.job_events),
        Route("/jobs/{job_id}/stop", actions.stop, methods=["POST"]),
        Route("/jobs/{job_id}/rerun", actions.rerun, methods=["POST"]),
        Route("/schedules", schedules.schedules_page),
        Route("/schedules/{schedule_id}/run", schedules.run_now, methods=["POST"]),
        Route("/admin", pages.admin_page),
        Route("/api/jobs", api.list_jobs),
        Route("/api/jobs/{job_id}", api.show_job),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]


def web_app(settings: Settings) -> Starlette:
    """The pages and the JSON API, behind the session cookie (the webhook routes are not)."""
    app = Starlette(
        routes=web_routes(),
        middleware=[Middleware(SessionMiddleware, **middleware_options(settings))],
    )
    app.state.web = Web(settings)
    app.state.oauth = signin.build_oauth(settings)
    return app
