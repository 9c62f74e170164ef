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


def turn_on(tracer: Tracer) -> None:
    global _tracer
    _tracer = tracer


def turn_off() -> None:
    global _tracer
    _tracer = None


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
