"""The job's own spans: nothing when tracing is off, and a trace context that crosses a thread
as a plain value when it is on (an SDK provider with an in-memory exporter)."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, Sampler, SamplingResult
from opentelemetry.trace import StatusCode

from resolver import observability
from resolver.core import logs, tracing


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.turn_on(provider.get_tracer("test"))
    try:
        yield exporter
    finally:
        tracing.turn_off()
        provider.shutdown()


def test_without_an_endpoint_nothing_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(observability.ENDPOINT, raising=False)
    assert observability.install("resolver-test") is None
    assert not tracing.enabled()
    with tracing.span("agent.step", step=1):
        tracing.note(tokens=3)
    assert tracing.carrier() == ()


def test_a_span_keeps_its_attributes_and_leaves_out_the_unknown(
    spans: InMemorySpanExporter,
) -> None:
    with tracing.span("llm.call", model="m", cost=None):
        tracing.note(tokens=12, exit_code=None)
    [span] = spans.get_finished_spans()
    assert span.name == "llm.call"
    assert dict(span.attributes or {}) == {"model": "m", "tokens": 12}


def test_a_carried_context_makes_the_other_threads_span_a_child(
    spans: InMemorySpanExporter,
) -> None:
    with tracing.span("request"):
        carried = tracing.carrier()

    def elsewhere() -> None:
        with tracing.within(carried), tracing.span("ingress.intake"):
            pass

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert [key for key, _ in carried] == ["traceparent"]
    request, intake = sorted(spans.get_finished_spans(), key=lambda s: s.name != "request")
    assert intake.parent is not None and request.context is not None
    assert intake.parent.span_id == request.context.span_id
    assert intake.context is not None and intake.context.trace_id == request.context.trace_id
    # The carrier was made here: the other thread enters the request's own context, unparsed.
    assert not intake.parent.is_remote


def test_a_message_sent_carries_its_own_span_as_the_workers_parent(
    spans: InMemorySpanExporter,
) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    tracing.turn_on(provider.get_tracer("test"), own_publishes=True)
    headers: dict[str, object] = {}
    with tracing.span("request"), tracing.publish("resolver.run_job", "abc", headers):
        pass
    published, request = spans.get_finished_spans()
    assert published.name == "apply_async/resolver.run_job"
    assert published.parent is not None and published.parent.span_id == request.context.span_id
    assert dict(published.attributes or {})["messaging.message.id"] == "abc"
    assert f"{published.context.span_id:016x}" in str(headers["traceparent"])


def test_a_process_with_the_celery_instrumentation_makes_no_span_of_its_own(
    spans: InMemorySpanExporter,
) -> None:
    headers: dict[str, object] = {}
    with tracing.publish("resolver.run_job", "abc", headers):
        pass
    assert headers == {}
    assert not spans.get_finished_spans()


class Counting(Sampler):
    """The SDK's default sampler, counting the spans begun: each begins with a question to it."""

    def __init__(self) -> None:
        self.asked = 0
        self.inner = ParentBased(ALWAYS_ON)

    def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
        self.asked += 1
        return self.inner.should_sample(*args, **kwargs)

    def get_description(self) -> str:
        return "Counting"


@pytest.fixture
def counted() -> Iterator[tuple[InMemorySpanExporter, Counting]]:
    """A web process's tracing (it makes its own publish spans), its sampler counting."""
    exporter, sampler = InMemorySpanExporter(), Counting()
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.turn_on(provider.get_tracer("test"), own_publishes=True)
    try:
        yield exporter, sampler
    finally:
        tracing.turn_off()
        provider.shutdown()


UNSAMPLED: tracing.Carrier = (("traceparent", f"00-{'ab' * 16}-{'cd' * 8}-00"),)


def test_work_not_sampled_begins_no_span_and_hands_the_decision_on(
    counted: tuple[InMemorySpanExporter, Counting],
) -> None:
    exporter, sampler = counted
    headers: dict[str, object] = {}
    with tracing.within(UNSAMPLED):
        with tracing.span("ingress.intake"), tracing.publish("resolver.run_job", "abc", headers):
            tracing.note(triggers=1)
            libraries_traced = is_instrumentation_enabled()
        carried = tracing.carrier()
    assert sampler.asked == 0 and not exporter.get_finished_spans()
    assert not libraries_traced  # SQL, Redis and httpx make no span either
    assert carried == UNSAMPLED and headers == dict(UNSAMPLED)  # the worker follows
    assert is_instrumentation_enabled()


def test_a_sampled_context_inside_work_not_sampled_is_traced(
    counted: tuple[InMemorySpanExporter, Counting],
) -> None:
    exporter, _ = counted
    sampled = (("traceparent", f"00-{'ef' * 16}-{'cd' * 8}-01"),)
    with tracing.within(UNSAMPLED), tracing.within(sampled), tracing.span("ingress.intake"):
        pass
    [intake] = exporter.get_finished_spans()
    assert intake.context is not None and f"{intake.context.trace_id:032x}" == "ef" * 16


def test_a_task_of_a_trace_not_sampled_makes_no_span(spans: InMemorySpanExporter) -> None:
    from opentelemetry import context, trace

    run = trace.NonRecordingSpan(trace.SpanContext(7, 9, is_remote=True))  # flags: not sampled
    token = context.attach(trace.set_span_in_context(run))
    try:
        with tracing.follow_decision(), tracing.span("git.clone"):
            carried = tracing.carrier()
            libraries_traced = is_instrumentation_enabled()
    finally:
        context.detach(token)
    assert not spans.get_finished_spans() and not libraries_traced
    assert carried == (("traceparent", f"00-{7:032x}-{9:016x}-00"),)
    with tracing.span("run/resolver.run_job"), tracing.follow_decision(), tracing.span("git.clone"):
        pass
    assert [s.name for s in spans.get_finished_spans()] == ["git.clone", "run/resolver.run_job"]


def _request(
    middleware: observability.RequestSpans, headers: list[tuple[bytes, bytes]]
) -> tracing.Carrier:
    """Send one request through `middleware`: what the app behind it would hand on."""
    seen: list[tracing.Carrier] = []

    async def app(_scope: Any, _receive: Any, send: Any) -> None:
        seen.append(tracing.carrier())
        await send({"type": "http.response.start", "status": 202, "headers": []})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(_message: Any) -> None:
        return None

    middleware.app = app
    scope = {"type": "http", "method": "POST", "path": "/webhooks/github", "headers": headers}
    asyncio.run(middleware(scope, receive, send))
    return seen[0]


def test_a_request_not_drawn_begins_no_span_and_its_messages_say_so(
    counted: tuple[InMemorySpanExporter, Counting],
) -> None:
    exporter, sampler = counted
    tracer = TracerProvider(sampler=sampler).get_tracer("web")
    carried = _request(observability.RequestSpans(None, tracer, ratio=0.0), [])  # type: ignore[arg-type]
    assert sampler.asked == 0 and not exporter.get_finished_spans()
    assert not tracing.sampled(carried)
    caller = (b"traceparent", f"00-{'ab' * 16}-{'cd' * 8}-01".encode())
    carried = _request(observability.RequestSpans(None, tracer, ratio=0.0), [caller])  # type: ignore[arg-type]
    assert tracing.sampled(carried) and "ab" * 16 in carried[0][1]  # the caller's decision


def test_the_web_sampler_keeps_every_request_the_middleware_let_through() -> None:
    from opentelemetry.sdk.trace.sampling import Decision
    from opentelemetry.trace import SpanKind

    sampler = observability._work_sampler(0.0, requests_decided=True)
    kept = sampler.should_sample(None, 5, "POST /webhooks/github", SpanKind.SERVER)
    polled = sampler.should_sample(None, 5, "BRPOP", SpanKind.CLIENT)
    assert kept.decision == Decision.RECORD_AND_SAMPLE and polled.decision == Decision.DROP


def test_the_web_process_imports_no_instrumentation_it_leaves_off(tmp_path: Any) -> None:
    """Only httpx's is on in the web process by default; the other three are not even imported
    (they cost memory and start-up time for nothing). In a process of its own, as a fresh one."""
    import json
    import os
    import subprocess
    import sys

    script = (
        "import json, sys\n"
        "from starlette.applications import Starlette\n"
        "from resolver import observability\n"
        "from resolver.core.settings import get_settings\n"
        "from resolver.store import db\n"
        "db.use_database(lambda: get_settings().database_url)  # as resolver.app does\n"
        "done = observability.install_web(Starlette())\n"
        "print(json.dumps([done is not None, sorted(m for m in sys.modules"
        " if m.startswith('opentelemetry.instrumentation.') and m.count('.') == 2)]))\n"
        "observability.shutdown()\n"
    )
    env = {**os.environ, observability.ENDPOINT: "http://127.0.0.1:9"}
    env.pop(observability.DISABLED, None)
    env["RESOLVER_DATABASE_URL"] = f"sqlite:///{tmp_path / 'web.db'}"
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    installed, imported = json.loads(out.strip().splitlines()[-1])
    assert installed
    assert [m for m in imported if m.rsplit(".", 1)[1] in observability.INSTRUMENTATIONS] == [
        "opentelemetry.instrumentation.httpx"
    ]


def test_a_traced_process_keeps_its_start_up_objects_out_of_full_collections(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A sampled span outlives the young generations in the exporter's queue; the full passes
    it brings on walk only what came after tracing began (gc.freeze), and stop doing so when
    tracing stops."""
    import gc

    monkeypatch.setenv(observability.ENDPOINT, "http://127.0.0.1:9")
    monkeypatch.setenv(observability.DISABLED, "celery,httpx,redis,sqlalchemy")
    monkeypatch.setenv("RESOLVER_DATABASE_URL", f"sqlite:///{tmp_path / 'traced.db'}")
    assert gc.get_freeze_count() == 0
    try:
        assert observability.install("resolver-test") is not None
        assert gc.get_freeze_count() > 0
    finally:
        observability.shutdown()
    assert gc.get_freeze_count() == 0


def test_a_request_span_is_named_by_its_route_never_by_a_path_with_a_token(
    spans: InMemorySpanExporter,
) -> None:
    """A link's or an operator's token is in its path: the trace backend sees the template."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    async def ok(_request: Any) -> PlainTextResponse:
        return PlainTextResponse("ok")

    web = Starlette(routes=[Route("/link/{token}", ok)])

    async def webhooks(scope: Any, receive: Any, send: Any) -> None:  # as app.Webhooks serves
        if scope["path"] != "/webhooks/github":
            return await web(scope, receive, send)
        scope[observability.ROUTE_KEY] = scope["path"]
        return await PlainTextResponse("", status_code=204)(scope, receive, send)

    tracer = TracerProvider(sampler=ALWAYS_ON)
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    app = observability.RequestSpans(webhooks, tracer.get_tracer("web"))
    client = TestClient(app)
    assert client.get("/link/SECRETTOKEN1").status_code == 200
    assert client.post("/webhooks/github").status_code == 204
    assert client.get("/nowhere/SECRETTOKEN2").status_code == 404
    finished = spans.get_finished_spans()
    assert [s.name for s in finished] == ["GET /link/{token}", "POST /webhooks/github", "GET"]
    assert "SECRETTOKEN" not in repr([(s.name, dict(s.attributes or {})) for s in finished])


def _leaked(finished: Any, secret: str) -> bool:
    return any(secret in s.to_json() for s in finished)


def test_an_exception_leaving_a_span_is_recorded_by_its_type_and_masked_message(
    spans: InMemorySpanExporter,
) -> None:
    """An error often quotes the key it was refused; the SDK recorded its message, its stack
    and every chained cause, and a status of both, past the mask."""
    key = "corpgw-" + secrets.token_hex(12)
    logs.register_secret(key)
    with pytest.raises(ValueError), tracing.span("llm.call", model="m"):
        try:
            raise KeyError(f"cause quoting {key}")
        except KeyError as cause:
            raise ValueError(f"invalid api key: {key}") from cause
    [span] = spans.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "ValueError"
    [event] = span.events
    assert dict(event.attributes or {}) == {
        "exception.type": "builtins.ValueError",
        "exception.message": "invalid api key: ******",
    }
    assert not _leaked([span], key)


def test_an_exception_leaving_a_request_is_recorded_masked(spans: InMemorySpanExporter) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.testclient import TestClient

    key = "corpgw-" + secrets.token_hex(12)
    logs.register_secret(key)

    async def refused(_request: Any) -> Any:
        raise RuntimeError(f"the gateway refused {key}")

    tracer = TracerProvider(sampler=ALWAYS_ON)
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    app = observability.RequestSpans(
        Starlette(routes=[Route("/x", refused)]), tracer.get_tracer("w")
    )
    assert TestClient(app, raise_server_exceptions=False).get("/x").status_code == 500
    [span] = spans.get_finished_spans()
    assert span.name == "GET /x" and span.status.description == "RuntimeError"
    assert [dict(e.attributes or {})["exception.message"] for e in span.events] == [
        "the gateway refused ******"
    ]
    assert not _leaked([span], key)
