"""The libraries' spans leave the process masked as a log line is: tracing installed as a
process installs it, exporting over OTLP/HTTP to a local receiver that decodes what a collector
would see, and real calls through the instrumentations (httpx, Celery, SQLAlchemy)."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest
from celery import Celery
from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from integrations.standin.server import ManyClientsServer
from resolver import observability
from resolver.core import logs, tracing
from resolver.core.redact import MASK
from tests.support.otlp_receiver import ReceivedSpan, otlp_receiver


@pytest.fixture
def hanging_up() -> Iterator[str]:
    """A local server that hangs up on every request without an answer: its address."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.close_connection = True

        def log_message(self, *_args: object) -> None:
            return

    server = ManyClientsServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_libraries_spans_are_exported_masked_and_without_stacks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hanging_up: str
) -> None:
    """A token in a URL's query, a literal in a statement, an error quoting the key in a task:
    the instrumentations record them (and the stack) past the logs' mask."""
    key = "corpgw-" + secrets.token_hex(12)
    logs.register_secret(key)
    engine = create_engine(f"sqlite:///{tmp_path / 'masked.db'}")
    app = Celery("masked", broker="memory://", set_as_current=False)

    @app.task(name="masked.refuse")
    def refuse() -> None:
        raise ValueError(f"the gateway refused {key}")

    with otlp_receiver() as (receiver, endpoint):
        monkeypatch.setenv(observability.ENDPOINT, endpoint)
        monkeypatch.setenv(observability.DISABLED, "redis,sqlalchemy")  # its engine: below
        monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "1")
        done = observability.install("resolver-test")
        assert done is not None
        statements = SQLAlchemyInstrumentor()
        statements.instrument(engine=engine, tracer_provider=done.provider, skip_dep_check=True)
        try:
            with tracing.span("job"):
                with pytest.raises(httpx.RemoteProtocolError):
                    httpx.get(f"{hanging_up}/callback?access_token={key}")
                with engine.connect() as db, pytest.raises(OperationalError):
                    db.execute(text(f"SELECT * FROM missing WHERE token = '{key}'"))
            assert refuse.apply().failed()
        finally:
            statements.uninstrument()
            observability.shutdown()  # flushes the spans
        spans = {span.name: span for span in receiver.spans}

    assert key not in repr(receiver.spans)
    request = spans["GET"]
    url = request.attributes.get("url.full") or request.attributes["http.url"]  # by semconv
    assert url == f"{hanging_up}/callback?access_token={MASK}"
    assert [name for name, _ in request.events] == ["exception"]
    statement = next(s for s in receiver.spans if "db.statement" in s.attributes)
    assert statement.attributes["db.statement"] == f"SELECT * FROM missing WHERE token = '{MASK}'"
    task = spans["run/masked.refuse"]
    assert task.status == f"the gateway refused {MASK}"
    assert _exceptions(task) == [
        {
            "exception.type": "ValueError",
            "exception.message": f"the gateway refused {MASK}",
            "exception.escaped": "False",
        }
    ]
    assert not [s for s in receiver.spans for _, e in s.events if "exception.stacktrace" in e]


def _exceptions(span: ReceivedSpan) -> list[dict[str, object]]:
    return [attributes for name, attributes in span.events if name == "exception"]
