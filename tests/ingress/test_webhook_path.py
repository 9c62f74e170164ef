"""The webhook path as a sender sees it, now that a delivery is read from ASGI messages in front
of the router: a body in many pieces, one whose last piece passes the limit, the reasons of an
ignored delivery in /metrics and the debug log, and the request span it still makes."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integrations.deliveries import github, load, post
from tests.integrations.github.test_bot_pulls import ignored_count


def in_pieces(body: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def test_a_body_sent_in_pieces_is_verified_whole(client: Any, store: Any) -> None:
    store.link("github", "21031067", "Codertocat")
    payload = load("github", "issue_comment.created__on_issue")
    payload["comment"]["body"] = "@resolver fix the typo"
    delivery = github("issue_comment.created", payload)
    headers = {k: v for k, v in delivery.headers.items() if k.lower() != "content-length"}
    response = client.post(delivery.path, content=in_pieces(delivery.body, 1000), headers=headers)
    assert response.status_code == 202
    assert [job.task for job in store.jobs()] == ["fix the typo"]


def test_a_body_whose_last_piece_passes_the_limit_is_413(
    client: Any, store: Any, configure: Any
) -> None:
    configure(RESOLVER_MAX_BODY_BYTES="2048")
    pieces = [b"x" * 1024, b"x" * 1025]  # the sender has nothing more to send after the 413
    delivery = github("issue_comment.created", load("github", "issue_comment.created__on_issue"))
    headers = {k: v for k, v in delivery.headers.items() if k.lower() != "content-length"}
    response = client.post(delivery.path, content=iter(pieces), headers=headers)
    assert response.status_code == 413
    assert store.jobs() == []


IGNORED = [
    ("status", {"state": "success", "sha": "a" * 40}, "unrouted event"),
    ("issue_comment.edited", "issue_comment.edited__on_issue", "ignored event"),
    ("issues.labeled", "issues.labeled__bug", "not a trigger"),  # not the trigger label
]


@pytest.mark.parametrize(("event", "payload", "reason"), IGNORED)
def test_each_ignored_delivery_is_counted_by_its_reason(
    client: Any, store: Any, event: str, payload: Any, reason: str
) -> None:
    body = load("github", payload) if isinstance(payload, str) else payload
    before = ignored_count(client, reason)
    for _ in range(2):
        assert post(client, github(event, body)).status_code == 204
    assert ignored_count(client, reason) == before + 2
    assert store.jobs() == []


def test_an_ignored_delivery_is_logged_at_debug_only(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    delivery = github("status", {"state": "success", "sha": "a" * 40})
    with caplog.at_level(logging.INFO, logger="resolver.ingress.endpoint"):
        assert post(client, delivery).status_code == 204
    assert [r for r in caplog.records if r.getMessage() == "webhook.github.ignored"] == []
    with caplog.at_level(logging.DEBUG, logger="resolver.ingress.endpoint"):
        assert post(client, github("status", {"state": "failure"})).status_code == 204
    [record] = [r for r in caplog.records if r.getMessage() == "webhook.github.ignored"]
    assert record.fields == {"key": "status", "why": "unrouted event"}  # type: ignore[attr-defined]


def test_a_webhook_request_still_makes_its_span(webhook_env: dict[str, str]) -> None:
    """The tracing middleware sits outside the webhooks' own mount, as install_web adds it."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from starlette.testclient import TestClient

    from resolver.app import create_app
    from resolver.observability import RequestSpans

    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = create_app()
    app.add_middleware(RequestSpans, tracer=provider.get_tracer("web"))
    with TestClient(app) as client:
        assert post(client, github("status", {"state": "success"})).status_code == 204
        forged = github("status", {"state": "success"})
        forged.headers["X-Hub-Signature-256"] = "sha256=" + "0" * 64
        assert post(client, forged).status_code == 401
    spans = [(s.name, dict(s.attributes or {})) for s in exporter.get_finished_spans()]
    statuses = [a["http.response.status_code"] for n, a in spans if n == "POST /webhooks/github"]
    assert statuses == [204, 401]
