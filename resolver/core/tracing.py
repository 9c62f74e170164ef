"""Spans for a job's own steps (clone, sandbox, each agent step, export, push), and the W3C trace
context a job's rows and messages carry between processes.

Off by default, and then each call is one check: nothing of OpenTelemetry is imported.
`resolver.observability` turns it on at a composition root when OTEL_EXPORTER_OTLP_ENDPOINT is
set. Work whose trace is not sampled (nine jobs in ten by default) is as cheap: `within` and
`follow_decision` mark it, and then no span is made in it, neither here nor by the libraries'
instrumentations; its carrier still says "not sampled", so the next process decides the same.
Attributes are numbers, flags and short names (a model, a tool): never a token, the text of
a request or a command's output, so a span cannot leak what the logs redact. An exception is
recorded by `failed`, masked as the logs mask it, never by the SDK.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Final, TypeAlias

from resolver.core.logs import redact

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

Value: TypeAlias = str | int | float | bool
Carrier: TypeAlias = tuple[tuple[str, str], ...]
"""A trace context as W3C headers (`traceparent`, `tracestate`): a plain value a frozen dataclass
can hold."""

_tracer: Tracer | None = None
_unsampled: ContextVar[Carrier] = ContextVar("resolver_unsampled", default=())
"""The context of the work under way when its trace is not sampled (else empty): what `carrier`
hands on, and the sign for every span here to be skipped."""
_quiet: Context | None = None
"""The base of such work's OpenTelemetry context (`_quiet_context`), made once."""
_own_publishes = False
"""Whether `publish` makes the span of each message sent (the web process, which leaves the
Celery instrumentation off: it cost more than the rest of a webhook's tracing)."""


class _Api:
    """The OpenTelemetry functions used on every span, bound once by `turn_on`: an import in a
    function runs again on each call, and a sampled webhook ran a dozen (bench/tracing.py)."""

    def __init__(self) -> None:
        from opentelemetry import context, trace
        from opentelemetry.propagate import extract, inject
        from opentelemetry.trace import SpanKind

        self.attach, self.detach, self.current = context.attach, context.detach, context.get_current
        self.current_span, self.extract, self.inject = trace.get_current_span, extract, inject
        self.producer = SpanKind.PRODUCER


_otel: _Api
"""Bound by `turn_on`; read only once `_tracer` says tracing is on."""
_contexts: dict[Carrier, Context] = {}
"""Contexts `within` enters again without parsing their carrier: a sampled one `carrier` made
here (its span live), and one not sampled as `within` extracted it. A webhook's intake and
publish enter its request's context in another thread, and each parsed the header the request
had just made."""
CONTEXTS_KEPT: Final = 64
"""How many `_contexts` are kept before they are let go (at once: the next extraction makes one
again). A carrier is entered within moments of being made; a context kept longer keeps its
span from the garbage collector for nothing."""


def turn_on(tracer: Tracer, *, own_publishes: bool = False) -> None:
    global _tracer, _own_publishes, _quiet, _otel
    _otel = _Api()
    _contexts.clear()
    _tracer, _own_publishes, _quiet = tracer, own_publishes, _quiet_context()


def turn_off() -> None:
    global _tracer, _own_publishes
    _tracer, _own_publishes = None, False
    _contexts.clear()


def enabled() -> bool:
    return _tracer is not None


def _kept(attributes: Mapping[str, Value | None]) -> dict[str, Value]:
    return {key: value for key, value in attributes.items() if value is not None}


@contextmanager
def span(name: str, **attributes: Value | None) -> Iterator[None]:
    """A child of the current span for the block; nothing at all when tracing is off or the
    trace is not sampled."""
    if _tracer is None or _unsampled.get():
        yield
        return
    with _tracer.start_as_current_span(
        name, attributes=_kept(attributes), record_exception=False, set_status_on_exception=False
    ) as current:
        try:
            yield
        except Exception as error:
            failed(current, error)
            raise


MESSAGE_MAX: Final = 1000
"""How much of an exception's masked message a span keeps."""


def failed(span: Span, error: Exception) -> None:
    """Mark `span` failed by `error` with its type and its message masked, and no stack: what
    the SDK records by default (the message, the stack with every chained cause, and a status
    of both) passes no mask, and an error often quotes the key it was refused."""
    from opentelemetry.trace import Status, StatusCode

    kind = type(error)
    span.add_event(
        "exception",
        {
            "exception.type": f"{kind.__module__}.{kind.__qualname__}",
            "exception.message": redact(str(error))[:MESSAGE_MAX],
        },
    )
    span.set_status(Status(StatusCode.ERROR, kind.__name__))


def note(**attributes: Value | None) -> None:
    """Add attributes to the current span (what is known only at its end: tokens, exit code)."""
    if _tracer is None or _unsampled.get():
        return
    _otel.current_span().set_attributes(_kept(attributes))


def carrier() -> Carrier:
    """The current trace context, to hand to another thread or process; empty when off."""
    if _tracer is None:
        return ()
    if unsampled := _unsampled.get():
        return unsampled
    headers: dict[str, str] = {}
    _otel.inject(headers)
    made = tuple(sorted(headers.items()))
    if sampled(made):
        _remember(made, _otel.current())
    return made


@contextmanager
def publish(task: str, task_id: str, headers: dict[str, object]) -> Iterator[None]:
    """The span of a task message sent in the block, named and linked as the Celery
    instrumentation names its own (`apply_async/<task>`, its context in the message's headers, where
    a worker's instrumentation reads it); nothing unless this process makes its own."""
    if _tracer is None or not _own_publishes:
        yield
        return
    if unsampled := _unsampled.get():
        headers.update(unsampled)  # no span; the worker follows the decision
        yield
        return
    attributes = {"celery.action": "apply_async", "celery.task_name": task}
    attributes["messaging.message.id"] = task_id
    with _tracer.start_as_current_span(
        f"apply_async/{task}", kind=_otel.producer, attributes=attributes
    ):
        _otel.inject(headers)
        yield


@contextmanager
def within(context: Carrier) -> Iterator[None]:
    """Run the block as part of the trace `context` names (from `carrier`): with no span at all
    if that trace is not sampled."""
    if _tracer is None or not context or context == _unsampled.get():
        yield
        return
    unsampled = context if not sampled(context) else ()
    assert _quiet is not None  # made by turn_on
    if unsampled and _own_publishes:
        base = _quiet  # this process's messages carry `context` by `publish`, not by a span
    elif (known := _contexts.get(context)) is not None:
        base = known
    elif unsampled:
        base = _otel.extract(dict(context), context=_quiet)
        _remember(context, base)
    else:
        base = _otel.extract(dict(context))  # on the current context: not one to keep
    token, mark = _otel.attach(base), _unsampled.set(unsampled)
    try:
        yield
    finally:
        _unsampled.reset(mark)
        _otel.detach(token)


def _remember(carried: Carrier, context: Context) -> None:
    if len(_contexts) >= CONTEXTS_KEPT:
        _contexts.clear()
    _contexts[carried] = context


@contextmanager
def follow_decision() -> Iterator[None]:
    """Run a task's block as its trace decided (the span its message started is current): when
    the trace is not sampled, the block makes no span, its own or the libraries'."""
    if _tracer is None or _unsampled.get():
        yield
        return
    current = _otel.current_span().get_span_context()
    if not current.is_valid or current.trace_flags.sampled:
        yield
        return
    with within(carrier()):
        yield


def sampled(context: Carrier) -> bool:
    """Whether the trace `context` names is recorded: the sampled flag of its `traceparent`
    (a context without one has not decided, and counts as sampled)."""
    for key, value in context:
        if key == "traceparent":
            flags = value.rpartition("-")[2]
            return not (len(flags) == 2 and flags in _UNSAMPLED_FLAGS)
    return True


_UNSAMPLED_FLAGS = frozenset(f"{flags:02x}" for flags in range(0, 256, 2))


def _quiet_context() -> Context:
    """An empty context in which the libraries' instrumentations are suppressed (the standard
    way, which each checks before any work of its own): the base of work not sampled."""
    from opentelemetry import context as otel_context
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    token = otel_context.attach(otel_context.Context())
    try:
        with suppress_instrumentation():
            return otel_context.get_current()
    finally:
        otel_context.detach(token)
