"""Linear: comment mentions, the label trigger via `updatedFrom`, the 60 s body timestamp."""

from __future__ import annotations

import time
from typing import Any

import pytest

from resolver.contract.triggers import read_trigger
from tests.integrations.deliveries import linear, load, post

ACTOR = "aacdca22-6266-4c0a-ab3c-8fa70a26765c"
ISSUE = "539068e2-ae88-4d09-bd75-22eb4a59612f"
ORG = "5c8a1d2e-0f3b-4a6c-9d7e-1f2a3b4c5d6e"
TRIGGER_LABEL = {"id": "11111111-2222-4333-8444-555555555555", "name": "resolver"}


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("linear", ACTOR)
    return store


def comment(body: str) -> dict[str, Any]:
    payload = load("linear", "Comment.create__on_issue")
    payload["data"]["body"] = body
    return payload


def labelled(fixture: str, previous: list[str] | None) -> dict[str, Any]:
    payload = load("linear", fixture)
    payload["data"]["labels"].append(TRIGGER_LABEL)
    payload["data"]["labelIds"].append(TRIGGER_LABEL["id"])
    if previous is not None:
        payload["updatedFrom"] = {"labelIds": previous, "updatedAt": "2020-01-23T12:53:18.084Z"}
    return payload


def test_comment_mentioning_the_bot(client: Any, linked: Any) -> None:
    response = post(client, linear(comment("@resolver the export times out, please fix")))
    assert response.status_code == 202
    [job] = linked.jobs()
    assert (job.source, job.repo) == ("linear", None)
    assert job.task == "the export times out, please fix"
    assert job.conversation_key == f"linear:{ORG}:{ISSUE}"
    trigger = read_trigger(job.trigger)
    part = trigger.part
    assert part["issue_id"] == ISSUE and part["issue_identifier"] == "ENG-1778"
    assert part["team"] == {"id": "72b2a2dc-6f4f-4423-9d34-24b5bd10634a", "key": "ENG"}
    assert part["comment_id"] == "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9"


def test_mention_written_as_a_profile_link(client: Any, linked: Any) -> None:
    body = "[@resolver](https://linear.app/acme/profiles/resolver) add a retry"
    assert post(client, linear(comment(body))).status_code == 202
    assert linked.jobs()[0].task == "add a retry"


def test_comment_without_a_mention(client: Any, linked: Any) -> None:
    assert post(client, linear(load("linear", "Comment.create__on_issue"))).status_code == 204


def test_trigger_label_just_added(client: Any, linked: Any) -> None:
    payload = labelled(
        "Issue.update__labels_changed", previous=["8b4b2f3c-1c0e-4f2a-9a33-4a6f3d2b1c00"]
    )
    assert post(client, linear(payload)).status_code == 202
    [job] = linked.jobs()
    assert job.task.startswith("Export fails for large reports")
    trigger = read_trigger(job.trigger)
    assert trigger.label == "resolver" and trigger.part["issue_identifier"] == "ENG-1778"
    assert trigger.part["updated_at"] == payload["data"]["updatedAt"]


def test_editing_an_already_labelled_issue_does_not_retrigger(client: Any, linked: Any) -> None:
    payload = labelled("Issue.update__title_edited", previous=None)
    assert post(client, linear(payload)).status_code == 204
    again = labelled("Issue.update__labels_changed", previous=[TRIGGER_LABEL["id"]])
    assert post(client, linear(again)).status_code == 204
    assert linked.jobs() == []


def test_issue_created_with_the_label(client: Any, linked: Any) -> None:
    assert post(client, linear(load("linear", "Issue.create__plain"))).status_code == 204
    assert post(client, linear(labelled("Issue.create__plain", None))).status_code == 202


@pytest.mark.parametrize("fixture", ["Comment.update__edit", "Reaction.create__emoji"])
def test_ignored_events(client: Any, linked: Any, fixture: str) -> None:
    payload = load("linear", fixture)
    if "body" in payload["data"]:
        payload["data"]["body"] = "@resolver fix"
    assert post(client, linear(payload)).status_code == 204


@pytest.mark.parametrize("offset", [-61, 61, -3600])
def test_timestamps_outside_sixty_seconds_are_401(client: Any, linked: Any, offset: int) -> None:
    delivery = linear(comment("@resolver fix"), sent_at=time.time() + offset)
    assert post(client, delivery).status_code == 401
    assert linked.jobs() == []


def test_timestamps_inside_sixty_seconds_are_accepted(client: Any, linked: Any) -> None:
    delivery = linear(comment("@resolver fix"), sent_at=time.time() - 55)
    assert post(client, delivery).status_code == 202


@pytest.mark.parametrize(
    "stamp",
    [int(time.time()), str(int(time.time() * 1000)), None, "nan"],
    ids=["seconds", "milliseconds-as-text", "none", "nan"],  # the same ids in every xdist worker
)
def test_timestamps_that_are_not_milliseconds_are_401(client: Any, linked: Any, stamp: Any) -> None:
    payload = {**comment("@resolver fix"), "webhookTimestamp": stamp}
    delivery = linear(_raw(payload))
    assert post(client, delivery).status_code == 401


def test_the_unsigned_timestamp_header_is_not_trusted(client: Any, linked: Any) -> None:
    delivery = linear(comment("@resolver fix"), sent_at=time.time() - 3600)
    delivery.headers["Linear-Timestamp"] = str(int(time.time() * 1000))
    assert post(client, delivery).status_code == 401


@pytest.mark.parametrize("mangle", [str.upper, lambda s: "sha256=" + s, lambda s: s[:-1]])
def test_bad_signatures_are_401(client: Any, linked: Any, mangle: Any) -> None:
    delivery = linear(comment("@resolver fix"))
    delivery.headers["Linear-Signature"] = mangle(delivery.headers["Linear-Signature"])
    assert post(client, delivery).status_code == 401


def test_linear_delivery_header_deduplicates(client: Any, linked: Any) -> None:
    first = post(client, linear(comment("@resolver fix"), delivery="d-1"))
    again = post(client, linear(comment("@resolver fix"), delivery="d-1", sent_at=time.time() + 1))
    assert (first.status_code, again.status_code) == (202, 200)


def test_without_linear_delivery_a_resent_event_is_a_duplicate(client: Any, linked: Any) -> None:
    statuses = []
    for sent_at in (time.time() - 30, time.time()):  # a retry is re-signed with a new timestamp
        delivery = linear(comment("@resolver fix"), sent_at=sent_at)
        delivery.headers.pop("Linear-Delivery")
        statuses.append(post(client, delivery).status_code)
    assert statuses == [202, 200]


@pytest.mark.parametrize(
    "change",
    [
        {"actor": {"id": "app-1", "name": "Some Integration", "type": "integration"}},
        {"data": {"botActor": {"id": "app-1", "type": "integration", "name": "GitHub"}}},
    ],
)
def test_bot_actors_are_ignored(client: Any, store: Any, change: dict[str, Any]) -> None:
    store.link("linear", "app-1")
    store.link("linear", ACTOR, user="bob")
    payload = comment("@resolver fix")
    payload["actor"] = change.get("actor", payload["actor"])
    payload["data"].update(change.get("data", {}))
    assert post(client, linear(payload)).status_code == 204


def test_unlinked_actor_gets_a_notice(client: Any, store: Any) -> None:
    assert post(client, linear(comment("@resolver fix"))).json() == {"notice": "unlinked"}
    assert read_trigger(store.notices()[0].context).part["issue_identifier"] == "ENG-1778"


def _raw(payload: dict[str, Any]) -> bytes:
    import json

    return json.dumps(payload).encode()
