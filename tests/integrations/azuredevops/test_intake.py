"""Azure DevOps's webhook side behind the real HTTP app: a delivery with the hook's
credentials becomes a job row; a retried notification is the same job; bad credentials, a
missing secret header, or an ignored event make none."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from integrations import registry
from integrations.azuredevops import PROVIDER
from resolver.contract.triggers import PullRequest, ReviewRequest, read_trigger
from tests.integrations.azuredevops.deliveries import PASSWORD, SENDER, headers_for, load
from tests.integrations.conftest import Store


@pytest.fixture
def azure_client(webhook_env: dict[str, str]) -> Iterator[TestClient]:
    assert registry.find("azuredevops") is PROVIDER  # installed by its registry line
    assert webhook_env["RESOLVER_AZUREDEVOPS_WEBHOOK_PASSWORD"] == PASSWORD
    from resolver.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client


def deliver(client: TestClient, name: str, **auth: Any) -> Any:
    body = json.dumps(load(name)).encode()
    return client.post("/webhooks/azuredevops", content=body, headers=headers_for(**auth))


COMMENT = "ms.vss-code.git-pullrequest-comment-event__in_thread"


def test_a_mention_with_the_hooks_credentials_becomes_a_job(
    azure_client: TestClient, store: Store
) -> None:
    store.link("azuredevops", SENDER, "alice")
    accepted = deliver(azure_client, COMMENT)
    assert accepted.status_code == 202, accepted.text
    [job] = store.jobs()
    assert (job.source, job.repo, job.state) == ("azuredevops", "Widgets/widgets", "queued")
    stored = read_trigger(job.trigger)
    assert isinstance(stored, PullRequest) and stored.comment_id == 1
    assert stored.origin.delivery == "00000000-0000-0000-0000-000000000000:11"


def test_asking_for_a_review_is_a_review_request(azure_client: TestClient, store: Store) -> None:
    """Azure DevOps posts reviews (`post_review`): "review this" is a review job, not ordinary
    work."""
    store.link("azuredevops", SENDER, "alice")
    payload = load(COMMENT)
    payload["resource"]["comment"]["content"] = "@resolver review this"
    body = json.dumps(payload).encode()
    accepted = azure_client.post("/webhooks/azuredevops", content=body, headers=headers_for())
    assert accepted.status_code == 202, accepted.text
    [job] = store.jobs()
    assert type(read_trigger(job.trigger)) is ReviewRequest


def test_a_retried_notification_is_the_same_job(azure_client: TestClient, store: Store) -> None:
    store.link("azuredevops", SENDER, "alice")
    first, second = deliver(azure_client, COMMENT), deliver(azure_client, COMMENT)
    assert (first.status_code, second.status_code) == (202, 200)
    assert len(store.jobs()) == 1


@pytest.mark.parametrize(
    "auth",
    [{"password": "wrong"}, {"header_secret": None}, {"header_secret": "wrong"}],
    ids=["password", "no_header", "header"],
)
def test_bad_credentials_are_a_401_and_change_nothing(
    azure_client: TestClient, store: Store, auth: dict[str, Any]
) -> None:
    assert deliver(azure_client, COMMENT, **auth).status_code == 401
    assert store.jobs() == [] and store.deliveries() == []


def test_an_ignored_event_is_answered_without_a_job(azure_client: TestClient, store: Store) -> None:
    assert deliver(azure_client, "workitem.created__plain").status_code == 204
    assert store.jobs() == []
