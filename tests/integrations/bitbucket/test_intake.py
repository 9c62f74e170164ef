"""Bitbucket's webhook side behind the real HTTP app, through its descriptor (`PROVIDER`): a
signed delivery becomes a job row and its status comment (the acknowledgement), and a bad one
nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from integrations import registry
from integrations.bitbucket import PROVIDER
from resolver.contract.triggers import PullRequest, ReviewRequest, read_trigger
from tests.integrations.bitbucket.deliveries import (
    CLOUD_SENDER,
    SECRET,
    headers_for,
    load,
)
from tests.integrations.conftest import Store

KEYS = {
    "pullrequest_comment_created": "pullrequest:comment_created",
    "repo_push": "repo:push",
    "pr_comment_added": "pr:comment:added",
    "repo_refs_changed": "repo:refs_changed",
}


@pytest.fixture
def bitbucket_client(webhook_env: dict[str, str]) -> Iterator[TestClient]:
    assert registry.find("bitbucket") is PROVIDER  # installed by its registry line
    assert webhook_env["RESOLVER_BITBUCKET_WEBHOOK_SECRET"] == SECRET  # deliveries.ENV
    from resolver.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client


def deliver(client: TestClient, name: str, **kw: Any) -> Any:
    body = json.dumps(load(name)).encode()
    headers = headers_for(KEYS[name.split("__", 1)[0]], body, **kw)
    return client.post("/webhooks/bitbucket", content=body, headers=headers)


def test_a_signed_mention_becomes_a_job_acknowledged_by_its_status_comment(
    bitbucket_client: TestClient, store: Store
) -> None:
    store.link("bitbucket", CLOUD_SENDER, "alice")
    accepted = deliver(bitbucket_client, "pullrequest_comment_created__on_pull")
    assert accepted.status_code == 202, accepted.text
    [job] = store.jobs()
    assert (job.source, job.repo, job.task, job.state) == (
        "bitbucket",
        "acme/widgets",
        "please fix this, with a test",
        "queued",
    )
    stored = read_trigger(job.trigger)
    assert isinstance(stored, PullRequest) and (stored.comment_id, stored.number) == (420, 3)
    assert "status" in {c.action for c in store.callbacks()}


def test_the_same_comment_through_a_second_hook_is_the_same_job(
    bitbucket_client: TestClient, store: Store
) -> None:
    store.link("bitbucket", CLOUD_SENDER, "alice")
    first = deliver(bitbucket_client, "pullrequest_comment_created__on_pull")
    second = deliver(bitbucket_client, "pullrequest_comment_created__on_pull")
    assert (first.status_code, second.status_code) == (202, 200)
    assert first.json()["job_id"] == second.json()["job_id"]


@pytest.mark.parametrize("secret", ["wrong", None], ids=["bad", "unsigned"])
def test_a_bad_or_missing_signature_is_refused_and_changes_nothing(
    bitbucket_client: TestClient, store: Store, secret: str | None
) -> None:
    refused = deliver(bitbucket_client, "pullrequest_comment_created__on_pull", secret=secret)
    assert refused.status_code == 401
    assert store.jobs() == [] and store.deliveries() == []


def test_asking_for_a_review_is_a_review_request(
    bitbucket_client: TestClient, store: Store
) -> None:
    """Bitbucket posts reviews (`post_review`): "review this" is a review job, not ordinary
    work."""
    store.link("bitbucket", CLOUD_SENDER, "alice")
    payload = load("pullrequest_comment_created__on_pull")
    payload["comment"]["content"]["raw"] = "@resolver review this"
    body = json.dumps(payload).encode()
    headers = headers_for("pullrequest:comment_created", body)
    accepted = bitbucket_client.post("/webhooks/bitbucket", content=body, headers=headers)
    assert accepted.status_code == 202, accepted.text
    [job] = store.jobs()
    assert type(read_trigger(job.trigger)) is ReviewRequest


@pytest.mark.parametrize(
    ("name", "level"),
    [("pr_comment_added__on_pull", "WARNING"), ("repo_refs_changed__main", "INFO")],
    ids=["mention", "push"],
)
def test_a_data_center_event_is_refused_with_its_reason_logged_and_makes_no_job(
    bitbucket_client: TestClient,
    store: Store,
    caplog: pytest.LogCaptureFixture,
    name: str,
    level: str,
) -> None:
    """Nothing speaks Data Center's REST API 1.0: a job could not answer, so none is made."""
    store.link("bitbucket", "2", "alice")  # alice on Data Center, linked: still no job
    with caplog.at_level("INFO", logger="integrations.bitbucket.routes"):
        answer = deliver(bitbucket_client, name)
    assert answer.status_code == 204
    assert store.jobs() == [] and store.callbacks() == []
    [record] = [
        r for r in caplog.records if r.getMessage() == "webhook.bitbucket.data_center_refused"
    ]
    assert record.levelname == level
    fields = record.__dict__["fields"]
    assert "REST API 1.0" in fields["why"] and fields["where"].startswith("WID/widgets")
