"""Twenty concurrent copies of one delivery create exactly one job, on a real server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import uvicorn

from tests.integrations import deliveries as sent
from tests.integrations.deliveries import load

COPIES = 20


@pytest.fixture
def server(webhook_env: dict[str, str]) -> Iterator[str]:
    from resolver.app import create_app

    config = uvicorn.Config(create_app(), host="127.0.0.1", port=0, log_config=None)
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    while not runner.started:
        if not thread.is_alive():
            pytest.fail("the server did not start")
        threading.Event().wait(0.01)
    port = runner.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    runner.should_exit = True
    thread.join(timeout=10)


def delivery_for(provider: str) -> sent.Delivery:
    if provider == "github":
        payload = load("github", "issue_comment.created__on_issue")
        payload["comment"]["body"] = "@resolver fix it"
        return sent.github("issue_comment.created", payload, delivery="one-delivery")
    if provider == "gitlab":
        payload = load("gitlab", "Note_Hook__on_issue")
        payload["object_attributes"]["note"] = "@resolver fix it"
        return sent.gitlab("Note Hook", payload, idempotency_key="one-delivery")
    if provider == "slack":
        payload = load("slack", "app_mention__in_channel")
        return sent.slack(payload)
    if provider == "jira":
        payload = load("jira", "comment_created__wiki_markup")
        payload["comment"]["body"] = "@resolver fix it"
        return sent.jira(payload, identifier="one-delivery")
    payload = load("linear", "Comment.create__on_issue")
    payload["data"]["body"] = "@resolver fix it"
    return sent.linear(payload, delivery="one-delivery")


@pytest.mark.parametrize("provider", sent.PROVIDERS)
def test_concurrent_copies_create_one_job(server: str, store: Any, provider: str) -> None:
    store.link(provider, sent.SENDERS[provider])
    delivery = delivery_for(provider)
    start = threading.Barrier(COPIES)

    def send(_: int) -> httpx.Response:
        with httpx.Client(base_url=server, timeout=30) as http:
            start.wait()
            return sent.post(http, delivery)

    with ThreadPoolExecutor(COPIES) as pool:
        responses = list(pool.map(send, range(COPIES)))

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * (COPIES - 1) + [202]
    [job] = store.jobs()
    assert {r.json()["job_id"] for r in responses} == {job.id}
    assert len(store.deliveries()) == 1
