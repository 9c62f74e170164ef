"""The HTTP edge: health, readiness, metrics, the webhook routes and the web app."""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from integrations import registry
from resolver import observability
from resolver.broker import celery_app, locks
from resolver.broker.outbox import queue_lengths
from resolver.core import metrics
from resolver.core.logs import log, register_secret
from resolver.core.settings import get_settings
from resolver.ingress.endpoint import Webhook, endpoint
from resolver.store import configured, db, jobs
from resolver.store.db import StoreError, session_scope
from resolver.store.models import utcnow
from resolver.web.routes import install, web_middleware, web_routes
from resolver.web.unavailable import store_unavailable

logger = logging.getLogger(__name__)

WEBHOOKS = "/webhooks/"


def webhooks() -> dict[str, Webhook]:
    """`POST /webhooks/<name>` for each installed provider; one without a secret answers 404."""
    return {
        f"{WEBHOOKS}{item.name}": endpoint(item.integration, get_settings)
        for item in registry.installed()
    }


def webhook_routes(hooks: dict[str, Webhook]) -> list[BaseRoute]:
    """The webhooks in the router too: for its 405 to another method, and for `url_for`."""
    return [
        Route(path, hook, methods=["POST"], name=path.removeprefix(WEBHOOKS))
        for path, hook in hooks.items()
    ]


class Webhooks:
    """Hands a `POST` to a webhook path straight to its endpoint, past the router and the web
    app's middleware (none of which a webhook uses): on an event we ignore they cost more CPU
    than verifying and routing it. Mounted inside the tracing middleware, which still makes a
    webhook's request span."""

    def __init__(self, app: ASGIApp, hooks: dict[str, Webhook]) -> None:
        self.app, self.hooks = app, hooks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            hook = self.hooks.get(scope["path"])
            if hook is not None:
                scope[observability.ROUTE_KEY] = scope["path"]  # its span's name: a fixed path
                await hook(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def metrics_page(_request: Request) -> Response:
    """Prometheus metrics of this process, with the queues measured now."""
    await run_in_threadpool(_measure_queues)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def _measure_queues() -> None:
    try:
        for queue, length in queue_lengths(get_settings().redis_url).items():
            metrics.QUEUE_MESSAGES.labels(queue).set(length)
    except locks.BrokerError as error:
        log(logger, logging.WARNING, "metrics.redis_failed", error=type(error).__name__)
    now = utcnow()
    with session_scope() as session:
        for queue, oldest in jobs.oldest_waiting(session).items():
            metrics.QUEUE_OLDEST_SECONDS.labels(queue).set(metrics.since(oldest, now) or 0.0)


async def healthz(_request: Request) -> Response:
    return PlainTextResponse("ok")


async def readyz(_request: Request) -> Response:
    """The database and Redis both answer."""
    checks: dict[str, str] = {}
    try:
        db.ping()
        checks["database"] = "ok"
    except Exception as error:  # any failure means not ready; the reason is reported
        checks["database"] = f"error: {type(error).__name__}"
    try:
        locks.server_version(get_settings().redis_url, timeout=2)
        checks["redis"] = "ok"
    except Exception as error:  # as above
        checks["redis"] = f"error: {type(error).__name__}"
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse(checks, status_code=200 if ready else 503)


def create_app(**kwargs: Any) -> Starlette:
    get_settings.compose(registry.settings_classes)
    get_settings.mask_with(register_secret)
    configured.install()
    db.use_database(lambda: get_settings().database_url)
    celery_app.use_settings(get_settings)
    settings, hooks = get_settings(), webhooks()
    routes: list[BaseRoute] = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_page),
        *webhook_routes(hooks),
        *web_routes(settings),
    ]
    middleware = [Middleware(Webhooks, hooks=hooks), *web_middleware(settings, WEBHOOKS)]
    handlers = {StoreError: store_unavailable}  # a locked or mid-upgrade database: 503
    app = Starlette(routes=routes, middleware=middleware, exception_handlers=handlers, **kwargs)
    install(app, settings)
    observability.install_web(app)  # traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set
    return app


def serve_app() -> Starlette:
    """The app each `resolver serve` process runs: `create_app`, then what the process imported
    and built is kept off the garbage collector's full passes (`freeze_what_started`)."""
    app = create_app()
    observability.freeze_what_started()
    return app
