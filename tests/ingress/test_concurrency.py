"""Twenty concurrent copies of one delivery create exactly one job, on a real server."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.integrations import deliveries as sent
from tests.integrations.deliveries import load

COPIES = 20


def delivery_for(provider: str) -> sent.Delivery:
    if provider not in sent.SENDERS:  # a provider that signs its own deliveries
        # Its deliveries module may name the comment that makes a job; else its first one.
        named = getattr(sent.own_sending(provider), "COMMENT_FIXTURE", None)
        path = next(
            p
            for p in sent.fixture_paths(provider)
            if p.stem == named or (named is None and "comment" in p.name.lower())
        )
        payload = json.loads(path.read_text())
        sent.own_sending(provider).set_text(payload, "@resolver fix it")
        return sent.signed(provider, sent.fixture_key(provider, path), payload)
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
    store.link(provider, sent.sender(provider))
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
