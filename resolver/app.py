"""The HTTP edge: health, readiness, metrics, the webhook routes and the web app."""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from integrations import registry
from resolver import observability
from resolver.broker import celery_app, locks
from resolver.broker.outbox import queue_lengths
from resolver.core import metrics
from resolver.core.logs import log
from resolver.core.settings import get_settings
from resolver.ingress.endpoint import endpoint
from resolver.store import configured, db, jobs
from resolver.store.db import session_scope
from resolver.store.models import utcnow
from resolver.web.routes import install, web_middleware, web_routes

logger = logging.getLogger(__name__)

WEBHOOKS = "/webhooks/"


def webhook_routes() -> list[BaseRoute]:
    """`POST /webhooks/<name>` for each installed provider; one without a secret answers 404."""
    return [
        Route(
            f"{WEBHOOKS}{item.name}",
            endpoint(item.integration, get_settings),
            methods=["POST"],
            name=item.name,
        )
        for item in registry.installed()
    ]


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
    configured.install()
    db.use_database(lambda: get_settings().database_url)
    celery_app.use_settings(get_settings)
    settings = get_settings()
    routes: list[BaseRoute] = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_page),
        *webhook_routes(),
        *web_routes(settings),
    ]
    app = Starlette(routes=routes, middleware=web_middleware(settings, WEBHOOKS), **kwargs)
    install(app, settings)
    observability.install_web(app)  # traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set
    return app
