"""Traces with OpenTelemetry, turned on at a composition root when OTEL_EXPORTER_OTLP_ENDPOINT is
set (the SDK's own variables configure the rest: OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS)
and the `tracing` extra is installed.

Unset, nothing here imports OpenTelemetry. Set, `RequestSpans` traces the web requests, and the
maintained instrumentations the Celery messages (whose headers carry the W3C `traceparent` from
the request to the worker and on to each callback; the web process makes the span of each message
it sends itself, `tracing.publish`), the database and Redis (in a worker; see
`WEB_QUIET`) and every httpx call (the model's and the forges'); `resolver.core.tracing` adds
the job's own steps.
"""

from __future__ import annotations

import gc
import logging
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from resolver.core import tracing
from resolver.core.logs import log
from resolver.store.db import get_engine

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.sampling import Sampler
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

ENDPOINT: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
UNTRACED_PATHS: Final = ("/metrics", "/healthz", "/readyz", "/static/")
DISABLED: Final = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"
INSTRUMENTATIONS: Final = ("celery", "httpx", "redis", "sqlalchemy")
"""The libraries' instrumentations, by the names OTEL_PYTHON_DISABLED_INSTRUMENTATIONS uses."""
WEB_QUIET: Final = frozenset({"sqlalchemy", "redis"})
"""Left off in the web process by default: a webhook's whole work is a few milliseconds, and a
span for each of its statements and Redis commands doubled its CPU time (bench/tracing.py).
Its request, intake and publish spans stay, and a worker traces every statement."""
WEB_NEVER: Final = frozenset({"celery"})
"""Never on in the web process: it makes its own span for each message it sends
(`tracing.publish`), at a fraction of the instrumentation's cost."""
DEFAULT_RATIO: Final = 0.1
"""The share of jobs traced unless OTEL_TRACES_SAMPLER_ARG says: one in ten. Every span is
exported at a cost, and a sample of the jobs shows where their time goes (bench/tracing.py)."""


@dataclass
class Tracing:
    """The tracer provider of this process and how to stop it (tests, a worker's shutdown)."""

    provider: Any
    undo: list[Callable[[], None]] = field(default_factory=list)

    def shutdown(self) -> None:
        """Flush the spans still queued, take the instrumentation off, turn tracing off."""
        tracing.turn_off()
        for step in reversed(self.undo):
            step()
        self.provider.shutdown()


_active: list[Tracing] = []


def wanted() -> bool:
    return bool(os.environ.get(ENDPOINT, "").strip())


def shutdown() -> None:
    """Stop this process's tracing, if any (an app made again in one process starts anew)."""
    while _active:
        _active.pop().shutdown()


def install(
    service: str, quiet: frozenset[str] = frozenset(), *, own_publishes: bool = False
) -> Tracing | None:
    """Trace this process (`service` names it unless OTEL_SERVICE_NAME does); None when off.
    `quiet` names the instrumentations left off unless OTEL_PYTHON_DISABLED_INSTRUMENTATIONS
    says otherwise. With `own_publishes`, the Celery instrumentation is never on and
    `tracing.publish` makes the span of each message sent."""
    shutdown()
    if not wanted():
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from resolver.core.masked_spans import MaskingExporter
    except ImportError:
        log(logger, logging.WARNING, "tracing.not_installed", extra="resolver[tracing]")
        return None

    name = os.environ.get("OTEL_SERVICE_NAME") or service
    ratio = chosen_ratio()
    sampler = None if ratio is None else _work_sampler(ratio, requests_decided=own_publishes)
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}), sampler=sampler)
    # Every span masked, the libraries' as well as ours, before it leaves the process.
    provider.add_span_processor(BatchSpanProcessor(MaskingExporter(OTLPSpanExporter())))
    done = Tracing(provider)
    _active.append(done)
    _instrument_libraries(done, quiet, WEB_NEVER if own_publishes else frozenset())
    tracing.turn_on(provider.get_tracer("resolver"), own_publishes=own_publishes)
    _spare_the_collector(done)
    return done


def _spare_the_collector(done: Tracing) -> None:
    """A sampled span waits seconds in the exporter's queue, so it outlives the young
    generations; spans then brought on a full pass every few thousand webhooks (bench/tracing.py).
    Freezing what the process holds from its start keeps that pass short."""
    freeze_what_started()
    done.undo.append(gc.unfreeze)


def freeze_what_started() -> None:
    """Keep the garbage collector's full passes off the objects this process holds from its
    start (`gc.freeze`), after one last pass. They live as long as the process anyway; left in
    the oldest generation, every full pass walked them all: a server's ~175,000 objects of the
    imports, 85 to 100 ms in which it answered no one (bench/ingress.py's p99 at 200 mentions/s
    went from under 5 ms to over 10 in a window that held one). Frozen, a pass walks only what
    came after: a few milliseconds."""
    gc.collect()
    gc.freeze()


def install_web(app: Starlette) -> Tracing | None:
    """`install` for the web process: a span per request of its Starlette app, and its own span
    for each task message it sends (`tracing.publish`) in place of the Celery instrumentation."""
    done = install("resolver-web", WEB_QUIET, own_publishes=True)
    if done is None:
        return None
    tracer = done.provider.get_tracer("resolver.web")
    app.add_middleware(RequestSpans, tracer=tracer, ratio=chosen_ratio())
    done.undo.append(lambda: _remove_middleware(app, RequestSpans))
    return done


class RequestSpans:
    """A server span per HTTP request, named `METHOD /path`, with the method, the path and the
    status: what the generic ASGI middleware records that a reader of a job's trace uses. That
    middleware's per-request work (a dozen attributes read from the headers, a wrapper for each
    message sent) cost more CPU than the rest of a webhook's tracing (bench/tracing.py). Scrapes
    and health checks (`UNTRACED_PATHS`) start no span; a request's `traceparent` is its parent.

    With `ratio` (the default sampler's), the request's trace is decided before any span: its
    `traceparent`'s flag, else a draw. A request not sampled then makes no span at all, nor does
    the work it leads to (`tracing.within`), and its messages carry the decision to the worker;
    the SDK's sampler keeps every request span this lets through. Without `ratio` (a sampler
    of the operator's own), the span is made and the sampler decides."""

    def __init__(self, app: ASGIApp, tracer: Any, ratio: float | None = None) -> None:
        from opentelemetry.propagate import extract
        from opentelemetry.trace import SpanKind, Status, StatusCode, get_current_span

        self.app, self.tracer, self.extract, self.ratio = app, tracer, extract, ratio
        self.server, self.failed = SpanKind.SERVER, Status(StatusCode.ERROR)
        self.span_of = get_current_span

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(UNTRACED_PATHS):
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        parent = None
        for key, value in scope["headers"]:
            if key == b"traceparent":
                parent = self.extract({"traceparent": value.decode("latin-1")})
                break
        unsampled = () if self.ratio is None else self._unsampled(parent, self.ratio)
        if unsampled:
            with tracing.within(unsampled):
                await self.app(scope, receive, send)
            return
        attributes = {"http.request.method": method}
        with self.tracer.start_as_current_span(
            method,
            context=parent,
            kind=self.server,
            attributes=attributes,
            record_exception=False,  # unmasked: `tracing.failed` records it
            set_status_on_exception=False,
        ) as span:
            if not span.is_recording():
                await self.app(scope, receive, send)
                return

            async def sent(message: Message) -> None:
                if message["type"] == "http.response.start":
                    span.set_attribute("http.response.status_code", message["status"])
                    if message["status"] >= 500:
                        span.set_status(self.failed)
                await send(message)

            try:
                await self.app(scope, receive, sent)
            except Exception as error:
                tracing.failed(span, error)
                raise
            finally:
                _name_span(span, method, scope)

    def _unsampled(self, parent: Any, ratio: float) -> tracing.Carrier:
        """Empty when a request's trace is sampled, else the context it hands on, flagged not
        sampled. Its caller's decision (`parent`, from its `traceparent`) stands; without one, a
        draw keeps `ratio` of the requests."""
        caller = self.span_of(parent).get_span_context() if parent is not None else None
        if caller is not None and caller.is_valid:
            if caller.trace_flags.sampled:
                return ()
            trace_id, span_id = caller.trace_id, caller.span_id
        elif random.random() < ratio:
            return ()
        else:
            trace_id, span_id = random.getrandbits(128) or 1, random.getrandbits(64) or 1
        return (("traceparent", f"00-{trace_id:032x}-{span_id:016x}-00"),)


def _remove_middleware(app: Starlette, kind: object) -> None:
    app.user_middleware = [m for m in app.user_middleware if m.cls is not kind]
    app.middleware_stack = app.build_middleware_stack()


def _instrument_libraries(done: Tracing, quiet: frozenset[str], never: frozenset[str]) -> None:
    """Every library's instrumentation but those named in OTEL_PYTHON_DISABLED_INSTRUMENTATIONS
    (the SDK's own variable), or when it is unset, those in `quiet`; never those in `never`.
    An instrumentation left off is not even imported: the web process leaves three of the four
    off, and importing them cost it memory and start-up time for nothing."""
    disabled = os.environ.get(DISABLED)
    off = never | (quiet if disabled is None else frozenset(n.strip() for n in disabled.split(",")))
    for name in INSTRUMENTATIONS:
        if name in off:
            continue
        instrumentor, extra = _instrumentor(name)
        instrumentor.instrument(tracer_provider=done.provider, **extra)
        done.undo.append(instrumentor.uninstrument)


def _instrumentor(name: str) -> tuple[Any, dict[str, Any]]:
    """The instrumentation `name`, imported only now, and its arguments."""
    if name == "celery":
        from opentelemetry.instrumentation.celery import CeleryInstrumentor

        return CeleryInstrumentor(), {}  # type: ignore[no-untyped-call]
    if name == "httpx":
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

        return HTTPXClientInstrumentor(), {}
    if name == "redis":
        from opentelemetry.instrumentation.redis import RedisInstrumentor

        return RedisInstrumentor(), {}
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    # The process's engine, made by store.db's own create_engine (which no patch reaches).
    # The instrumentation declares SQLAlchemy below 2.1 and would do nothing on 2.1 without
    # the skip; the engine events it listens to are the same (tests/e2e/test_traces.py).
    return SQLAlchemyInstrumentor(), {"skip_dep_check": True, "engine": get_engine()}


def _work_sampler(ratio: float, *, requests_decided: bool = False) -> Sampler:
    """Traces that start with work (a request, a task; `ratio` of them), and none that starts
    with a lone client call: a worker polls Redis all the time, and each poll would be a trace of
    its own. With `requests_decided`, a request's span is kept: `RequestSpans` drew already."""
    from opentelemetry.sdk.trace.sampling import (
        Decision,
        ParentBased,
        Sampler,
        SamplingResult,
        TraceIdRatioBased,
    )
    from opentelemetry.trace import SpanKind

    share = TraceIdRatioBased(ratio)

    class WorkOnly(Sampler):
        def should_sample(
            self,
            parent_context: Any,
            trace_id: int,
            name: str,
            kind: SpanKind | None = None,
            attributes: Any = None,
            links: Any = None,
            trace_state: Any = None,
        ) -> SamplingResult:
            if kind == SpanKind.CLIENT:
                return SamplingResult(Decision.DROP)
            if kind == SpanKind.SERVER and requests_decided:
                return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)
            return share.should_sample(parent_context, trace_id, name, kind, attributes, links)

        def get_description(self) -> str:
            return "WorkOnly"

    return ParentBased(root=WorkOnly())


def chosen_ratio() -> float | None:
    """The share of jobs traced: OTEL_TRACES_SAMPLER_ARG (the SDK's own name), else
    `DEFAULT_RATIO`; None when OTEL_TRACES_SAMPLER names a sampler of the operator's own."""
    if os.environ.get("OTEL_TRACES_SAMPLER"):
        return None
    raw = os.environ.get("OTEL_TRACES_SAMPLER_ARG", "").strip()
    try:
        return min(1.0, max(0.0, float(raw))) if raw else DEFAULT_RATIO
    except ValueError:
        log(logger, logging.WARNING, "tracing.bad_ratio", value=raw)
        return DEFAULT_RATIO


ROUTE_KEY: Final = "resolver.route"
"""Where an app served ahead of the router (the webhooks) puts the fixed path it serves, for
the request's span to be named by it as by a route's template."""


def _name_span(span: Any, method: str, scope: Scope) -> None:
    """A request's span is named by its route's template (`GET /link/{token}`), never by a path
    that may carry a token; a path no route knows, by nothing but its method."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        template = scope.get(ROUTE_KEY)
    if isinstance(template, str):
        span.update_name(f"{method} {template}")
        span.set_attribute("http.route", template)
