"""Spans for a job's own steps (clone, sandbox, each agent step, export, push), and the W3C trace
context a job's rows and messages carry between processes.

Off by default, and then each call is one check: nothing of OpenTelemetry is imported.
`resolver.observability` turns it on at a composition root when OTEL_EXPORTER_OTLP_ENDPOINT is
set. Attributes are numbers, flags and short names (a model, a tool): never a token, the text of
a request or a command's output, so a span cannot leak what the logs redact.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

Value: TypeAlias = str | int | float | bool
Carrier: TypeAlias = tuple[tuple[str, str], ...]
"""A trace context as W3C headers (`traceparent`, `tracestate`): a plain value a frozen dataclass
can hold."""

_tracer: Tracer | None = None
_own_publishes = False
"""Whether `publish` makes the span of each message sent (the web process, which leaves the
Celery instrumentation off: it cost more than the rest of a webhook's tracing)."""


def turn_on(tracer: Tracer, *, own_publishes: bool = False) -> None:
    global _tracer, _own_publishes
    _tracer, _own_publishes = tracer, own_publishes


def turn_off() -> None:
    global _tracer, _own_publishes
    _tracer, _own_publishes = None, False


def enabled() -> bool:
    return _tracer is not None


def _kept(attributes: Mapping[str, Value | None]) -> dict[str, Value]:
    return {key: value for key, value in attributes.items() if value is not None}


@contextmanager
def span(name: str, **attributes: Value | None) -> Iterator[None]:
    """A child of the current span for the block; nothing at all when tracing is off."""
    if _tracer is None:
        yield
        return
    with _tracer.start_as_current_span(name, attributes=_kept(attributes)):
        yield


def note(**attributes: Value | None) -> None:
    """Add attributes to the current span (what is known only at its end: tokens, exit code)."""
    if _tracer is None:
        return
    from opentelemetry import trace

    trace.get_current_span().set_attributes(_kept(attributes))


def carrier() -> Carrier:
    """The current trace context, to hand to another thread or process; empty when off."""
    if _tracer is None:
        return ()
    from opentelemetry.propagate import inject

    headers: dict[str, str] = {}
    inject(headers)
    return tuple(sorted(headers.items()))


@contextmanager
def publish(task: str, task_id: str, headers: dict[str, object]) -> Iterator[None]:
    """The span of a task message sent in the block, named and linked as the Celery
    instrumentation names its own (`apply_async/<task>`, its context in the message's headers, where
    a worker's instrumentation reads it); nothing unless this process makes its own."""
    if _tracer is None or not _own_publishes:
        yield
        return
    from opentelemetry.propagate import inject
    from opentelemetry.trace import SpanKind

    attributes = {"celery.action": "apply_async", "celery.task_name": task}
    attributes["messaging.message.id"] = task_id
    with _tracer.start_as_current_span(
        f"apply_async/{task}", kind=SpanKind.PRODUCER, attributes=attributes
    ):
        inject(headers)
        yield


@contextmanager
def within(context: Carrier) -> Iterator[None]:
    """Run the block as part of the trace `context` names (from `carrier`)."""
    if _tracer is None or not context:
        yield
        return
    from opentelemetry import context as otel_context
    from opentelemetry.propagate import extract

    token = otel_context.attach(extract(dict(context)))
    try:
        yield
    finally:
        otel_context.detach(token)
