"""The job's own spans: nothing when tracing is off, and a trace context that crosses a thread
as a plain value when it is on (an SDK provider with an in-memory exporter)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from resolver import observability
from resolver.core import tracing


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
