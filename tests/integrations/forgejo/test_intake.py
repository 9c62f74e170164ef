"""Forgejo's webhook side behind the real HTTP app, through its descriptor (`PROVIDER`): a
signed delivery becomes a job row, and a bad one nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from integrations import registry
from integrations.forgejo import PROVIDER
from resolver.contract.triggers import ForgeIssue, read_trigger
from tests.integrations.conftest import Store
from tests.integrations.forgejo.deliveries import SECRET, headers_for, load


@pytest.fixture
def forgejo_client(webhook_env: dict[str, str]) -> Iterator[TestClient]:
    assert registry.find("forgejo") is PROVIDER  # installed by its registry line
    assert webhook_env["RESOLVER_FORGEJO_WEBHOOK_SECRET"] == SECRET  # deliveries.ENV
    from resolver.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client


def deliver(client: TestClient, name: str, payload: dict[str, Any] | None = None, **kw: Any) -> Any:
    body = json.dumps(payload if payload is not None else load(name)).encode()
    headers = headers_for(name.split("__", 1)[0], body, **kw)
    return client.post("/webhooks/forgejo", content=body, headers=headers)


def test_a_signed_mention_becomes_a_job(forgejo_client: TestClient, store: Store) -> None:
    store.link("forgejo", "2", "alice")
    accepted = deliver(forgejo_client, "issue_comment.created__on_issue")
    assert accepted.status_code == 202, accepted.text
    [job] = store.jobs()
    assert (job.source, job.repo, job.task, job.state) == (
        "forgejo",
        "forgejo/widgets",
        "please fix this, with a test",
        "queued",
    )
    assert job.conversation_key == "forgejo:forgejo/widgets#7"
    stored = read_trigger(job.trigger)
    assert isinstance(stored, ForgeIssue) and (stored.comment_id, stored.number) == (42, 7)
    assert stored.origin.provider == "forgejo"


def test_the_same_comment_through_a_second_hook_is_the_same_job(
    forgejo_client: TestClient, store: Store
) -> None:
    store.link("forgejo", "2", "alice")
    first = deliver(forgejo_client, "issue_comment.created__on_issue")
    second = deliver(forgejo_client, "issue_comment.created__on_issue", gitea=True)
    assert (first.status_code, second.status_code) == (202, 200)  # 200: the job already made
    [job] = store.jobs()
    assert first.json()["job_id"] == second.json()["job_id"] == job.id


def test_a_bad_signature_is_refused_and_changes_nothing(
    forgejo_client: TestClient, store: Store
) -> None:
    refused = deliver(forgejo_client, "issue_comment.created__on_issue", secret="wrong")
    assert refused.status_code == 401
    assert store.jobs() == [] and store.deliveries() == []


def test_an_ignored_event_is_answered_without_a_job(
    forgejo_client: TestClient, store: Store
) -> None:
    assert deliver(forgejo_client, "issue_comment.edited__on_issue").status_code == 204
    assert store.jobs() == []
