"""Every span exported masked as the logs mask a line, whoever made it: the libraries'
instrumentations record a URL with its query (a token in it), a statement with its literals, an
exception's message and stack, and a status quoting it, and pass no mask. Imported only where
tracing is installed (it needs the SDK).

The exporter is wrapped rather than a span processor added: a span is read-only once it ends,
and the SDK's hook before that is private. The work is done in the exporter's own thread, on the
spans sampled, and a span with nothing to mask is handed on as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status
from opentelemetry.util.types import Attributes, AttributeValue

from resolver.core.logs import redact
from resolver.core.tracing import MESSAGE_MAX

STACKTRACE: Final = "exception.stacktrace"
"""Dropped: the stack of the error and of every cause, with their messages; our own spans record
an exception by its type and masked message (`tracing.failed`), and a library's keep no more."""
MESSAGE: Final = "exception.message"


class MaskingExporter(SpanExporter):
    """Hands `inner` each span masked (`masked`)."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([masked(span) for span in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def masked(span: ReadableSpan) -> ReadableSpan:
    """`span` with every string in its name, attributes, events, links and status masked, and no
    exception stack; `span` itself when none of that changes it."""
    name, attributes = redact(span.name), _masked(span.attributes)
    events = [_masked_event(event) for event in span.events]
    links = [_masked_link(link) for link in span.links]
    status = span.status
    if status.description:
        status = Status(status.status_code, redact(status.description)[:MESSAGE_MAX])
    if (
        name == span.name
        and attributes is None
        and all(e is o for e, o in zip(events, span.events, strict=True))
        and all(k is o for k, o in zip(links, span.links, strict=True))
        and status.description == span.status.description
    ):
        return span
    return _Masked(
        span,
        name=name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=span.attributes if attributes is None else attributes,
        events=events,
        links=links,
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class _Masked(ReadableSpan):
    """A masked copy that reports what the SDK's limits dropped from the original."""

    def __init__(self, original: ReadableSpan, **fields: object) -> None:
        super().__init__(**fields)  # type: ignore[arg-type]
        self._dropped = (
            original.dropped_attributes,
            original.dropped_events,
            original.dropped_links,
        )

    @property
    def dropped_attributes(self) -> int:
        return self._dropped[0]

    @property
    def dropped_events(self) -> int:
        return self._dropped[1]

    @property
    def dropped_links(self) -> int:
        return self._dropped[2]


def _masked(attributes: Attributes) -> dict[str, AttributeValue] | None:
    """`attributes` with every string masked, or None when none changes."""
    if not attributes:
        return None
    changed = {}
    for key, value in attributes.items():
        if isinstance(value, str):
            if (masked_value := redact(value)) != value:
                changed[key] = masked_value
        elif isinstance(value, Sequence) and any(isinstance(item, str) for item in value):
            items = tuple(redact(item) if isinstance(item, str) else item for item in value)
            if items != tuple(value):
                changed[key] = items  # type: ignore[assignment]
    return {**attributes, **changed} if changed else None


def _masked_event(event: Event) -> Event:
    attributes: Mapping[str, AttributeValue] | None = _masked(event.attributes)
    if STACKTRACE in (event.attributes or {}):
        attributes = dict(attributes or event.attributes or {})
        del attributes[STACKTRACE]
    if attributes is None:
        return event
    if isinstance(message := attributes.get(MESSAGE), str):
        attributes = {**attributes, MESSAGE: message[:MESSAGE_MAX]}
    return Event(event.name, attributes, event.timestamp)


def _masked_link(link: Link) -> Link:
    attributes = _masked(link.attributes)
    return link if attributes is None else Link(link.context, attributes)
