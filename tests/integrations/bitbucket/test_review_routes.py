"""Bitbucket Cloud's pull request events for auto-reviews: someone's pull request, created or
updated, is one quiet job per source commit for its linked author (nothing said before the
worker reads the opt-in), a draft's apart; nothing for the bot's own pull requests or ended
ones; a mention in a new pull request's description still comes first. `pullrequest:updated`
does not say what changed, so an edit at a commit already seen is a duplicate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from integrations import registry
from integrations.bitbucket import PROVIDER
from integrations.bitbucket.events import parse_event
from integrations.bitbucket.review_routes import AUTO_REVIEW_TASK
from integrations.bitbucket.routes import ROUTES
from resolver.contract.inbound import Policy, RouteResult, Trigger, route_event
from resolver.contract.triggers import PullRequest, ReviewRequest, read_trigger
from tests.integrations.bitbucket.deliveries import CLOUD_SENDER, SECRET, headers_for, load
from tests.integrations.conftest import Store

BOT_UUID = "{b07b07b0-0000-4000-8000-000000000001}"
POLICY = Policy("resolver", "resolver", bot_account_ids=frozenset({BOT_UUID}))
REPO = "acme/widgets"
HEAD = "d3adb33f1a2b"  # Bitbucket's payloads name a commit by 12 hex digits
CREATED, UPDATED = "pullrequest:created", "pullrequest:updated"


def pull_event(**pull: Any) -> dict[str, Any]:
    """alice's open pull request #5 from `feature/docs` at HEAD, without a mention."""
    payload = load("pullrequest_updated__plain")
    payload["pullrequest"].update(description="Document the options.", **pull)
    return payload


def at(payload: dict[str, Any], head: str) -> dict[str, Any]:
    payload["pullrequest"]["source"]["commit"]["hash"] = head
    return payload


def routed(key: str, payload: dict[str, Any], policy: Policy = POLICY) -> RouteResult:
    body = json.dumps(payload).encode()
    return route_event(ROUTES, parse_event(headers_for(key, body), body), policy)


@pytest.mark.parametrize("key", [CREATED, UPDATED])
def test_a_created_or_updated_pull_request_is_an_auto_review_at_its_source_commit(
    key: str,
) -> None:
    found = routed(key, pull_event())
    assert isinstance(found, Trigger) and found.auto_review
    assert found.task == AUTO_REVIEW_TASK
    assert (found.sender.external_id, found.sender.login) == (CLOUD_SENDER, "alice")
    assert (found.repo, found.conversation_key) == (REPO, f"bitbucket:{REPO}#5")
    assert found.once_key == f"auto-review:bitbucket:{REPO}#5@{HEAD}"
    subject = found.subject
    assert isinstance(subject, ReviewRequest) and subject.auto and not subject.draft
    assert (subject.number, subject.head_ref, subject.head_sha) == (5, "feature/docs", HEAD)
    assert (subject.base_ref, subject.body) == ("main", "Document the options.")
    assert subject.url == "https://bitbucket.org/acme/widgets/pull-requests/5"


def test_the_author_is_the_requester_whoever_updated_it() -> None:
    payload = pull_event()
    payload["actor"] = {"type": "user", "uuid": "{b0b}", "nickname": "bob"}
    found = routed(UPDATED, payload)
    assert isinstance(found, Trigger) and found.sender.external_id == CLOUD_SENDER


def test_a_new_pull_request_that_mentions_the_bot_is_the_persons_request_first() -> None:
    found = routed(CREATED, load("pullrequest_created__mentions_bot"))
    assert isinstance(found, Trigger) and not found.auto_review
    assert isinstance(found.subject, PullRequest) and found.once_key == f"pull:{REPO}#5"
    # An update does not read the description: the same pull request is an auto-review.
    updated = routed(UPDATED, load("pullrequest_created__mentions_bot"))
    assert isinstance(updated, Trigger) and updated.auto_review


@pytest.mark.parametrize(
    "pull", [{"draft": True}, {"draft": None, "state": "DRAFT"}], ids=["flag", "state"]
)
def test_a_draft_is_marked_and_keyed_apart_so_marking_it_ready_still_reviews(
    pull: dict[str, Any],
) -> None:
    found = routed(UPDATED, pull_event(**pull))
    assert isinstance(found, Trigger) and isinstance(found.subject, ReviewRequest)
    assert found.subject.draft
    assert found.once_key == f"auto-review:bitbucket:{REPO}#5@{HEAD}:draft"


@pytest.mark.parametrize(
    "pull",
    [
        {"author": {"type": "user", "uuid": "{b07}", "nickname": "resolver"}},
        {"author": {"type": "app_user", "uuid": BOT_UUID, "display_name": "Resolver"}},
        {"source": {"branch": {"name": "resolver/7-fix"}, "commit": {"hash": HEAD}}},
    ],
    ids=["by-the-bots-name", "by-the-bots-account", "from-a-bot-branch"],
)
def test_the_bot_never_reviews_its_own_pull_requests(pull: dict[str, Any]) -> None:
    assert routed(UPDATED, pull_event(**pull)) is None
    assert routed(CREATED, pull_event(**pull)) is None


@pytest.mark.parametrize(
    "pull",
    [
        {"state": "MERGED"},
        {"state": "DECLINED"},
        {"state": "SUPERSEDED"},
        {"author": None},
        {"source": {"branch": {"name": "feature/docs"}}},
    ],
    ids=["merged", "declined", "superseded", "no-author", "no-commit"],
)
def test_an_ended_pull_request_or_one_without_author_or_commit_is_nothing(
    pull: dict[str, Any],
) -> None:
    assert routed(UPDATED, pull_event(**pull)) is None


def test_a_queued_pull_request_is_still_open() -> None:
    assert isinstance(routed(UPDATED, pull_event(state="QUEUED")), Trigger)


# --- behind the real HTTP app ----------------------------------------------------------------


@pytest.fixture
def bitbucket_client(webhook_env: dict[str, str]) -> Iterator[TestClient]:
    assert registry.find("bitbucket") is PROVIDER
    assert webhook_env["RESOLVER_BITBUCKET_WEBHOOK_SECRET"] == SECRET
    from resolver.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client


def deliver(client: TestClient, key: str, payload: dict[str, Any]) -> Any:
    body = json.dumps(payload).encode()  # each a new delivery (X-Request-UUID)
    return client.post("/webhooks/bitbucket", content=body, headers=headers_for(key, body))


def test_an_edit_at_the_same_commit_is_no_second_review_and_new_commits_are(
    bitbucket_client: TestClient, store: Store
) -> None:
    store.link("bitbucket", CLOUD_SENDER, "alice")
    created = deliver(bitbucket_client, CREATED, pull_event())
    retitled = deliver(bitbucket_client, UPDATED, pull_event(title="Document every option"))
    pushed = deliver(bitbucket_client, UPDATED, at(pull_event(), "0123456789ab"))
    assert (created.status_code, retitled.status_code, pushed.status_code) == (202, 200, 202)
    assert retitled.json() == {"job_id": created.json()["job_id"], "duplicate": True}
    jobs = store.jobs()
    heads = [read_trigger(job.trigger) for job in jobs]
    assert [h.head_sha for h in heads if isinstance(h, ReviewRequest) and h.auto] == [
        HEAD,
        "0123456789ab",
    ]
    assert store.callbacks() == []  # nothing said before the worker reads the opt-in


def test_a_draft_marked_ready_at_the_same_commit_is_a_job_of_its_own(
    bitbucket_client: TestClient, store: Store
) -> None:
    store.link("bitbucket", CLOUD_SENDER, "alice")
    as_draft = deliver(bitbucket_client, CREATED, pull_event(draft=True))
    edited = deliver(bitbucket_client, UPDATED, pull_event(draft=True, title="WIP docs"))
    ready = deliver(bitbucket_client, UPDATED, pull_event(draft=False))
    assert (as_draft.status_code, edited.status_code, ready.status_code) == (202, 200, 202)
    drafts = [getattr(read_trigger(job.trigger), "draft", None) for job in store.jobs()]
    assert sorted(drafts) == [False, True]


def test_an_unlinked_author_gets_no_notice_for_an_auto_review(
    bitbucket_client: TestClient, store: Store
) -> None:
    answer = deliver(bitbucket_client, UPDATED, pull_event())
    assert answer.status_code == 204  # nothing can run, nobody asked: no row
    assert store.jobs() == [] and store.notices() == [] and store.callbacks() == []
    assert store.deliveries() == []
