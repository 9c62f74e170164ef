"""A tiny OTLP/HTTP trace receiver on loopback: it decodes each export (protobuf) with
`opentelemetry-proto`, as a collector would, and keeps the spans for a test to read."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from integrations.standin.server import ManyClientsServer

Value = str | int | float | bool | None


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as it arrived: ids in hex, its service, its attributes as plain values, its
    events' names and attributes, its status's description."""

    name: str
    service: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Value]
    events: tuple[tuple[str, dict[str, Value]], ...] = ()
    status: str = ""


def _plain(value: AnyValue) -> Value:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return ",".join(str(_plain(item)) for item in value.array_value.values)
    return None if kind is None else getattr(value, kind)


def decode(body: bytes) -> list[ReceivedSpan]:
    """Every span of one export request."""
    request = ExportTraceServiceRequest.FromString(body)
    found = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _plain(a.value) for a in resource_spans.resource.attributes}
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                found.append(
                    ReceivedSpan(
                        name=span.name,
                        service=str(resource.get("service.name")),
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        attributes={a.key: _plain(a.value) for a in span.attributes},
                        events=tuple(
                            (e.name, {a.key: _plain(a.value) for a in e.attributes})
                            for e in span.events
                        ),
                        status=span.status.message,
                    )
                )
    return found


class Receiver:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()

    def add(self, spans: list[ReceivedSpan]) -> None:
        with self._lock:
            self.spans.extend(spans)

    def named(self, name: str) -> list[ReceivedSpan]:
        with self._lock:
            return [s for s in self.spans if s.name == name]


@contextmanager
def otlp_receiver() -> Iterator[tuple[Receiver, str]]:
    """A running receiver and its endpoint (for OTEL_EXPORTER_OTLP_ENDPOINT)."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            receiver.add(decode(body))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_args: object) -> None:
            return

    server = ManyClientsServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
