"""GitLab's merge request events for auto-reviews, as GitHub's: opened, reopened, new commits or
marked ready is one quiet job per head for the linked author (no 👀, no status message: the
worker reads the opt-in first), nothing for the bot's own merge requests, and the trigger label
on the same hook still asks for work."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from resolver.contract.triggers import PullRequest, ReviewRequest, read_trigger
from tests.integrations.deliveries import gitlab, load, post

AUTHOR = "51"  # `author_id` of the recorded merge request; the hook's `user` is root (1)
HEAD = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("gitlab", AUTHOR, "author")
    return store


def hook(fixture: str = "Merge_Request_Hook__opened", **item: Any) -> dict[str, Any]:
    """The recorded hook without its label change (which would be the label trigger's)."""
    payload = copy.deepcopy(load("gitlab", fixture))
    del payload["changes"]["labels"]
    payload["object_attributes"].update(item)
    return payload


def ready() -> dict[str, Any]:
    """Marked ready: an `update` whose changes have `draft` from true to false, no new commits."""
    return hook(action="update")


EVENTS = {
    "opened": lambda: hook(draft=True),
    "reopened": lambda: hook(action="reopen"),
    "new-commits": lambda: hook("Merge_Request_Hook__new_commits"),
    "marked-ready": ready,
}


@pytest.mark.parametrize("event", list(EVENTS))
def test_a_merge_request_event_is_one_quiet_auto_review_per_head(
    webhook_client: Any, linked: Any, event: str
) -> None:
    payload = EVENTS[event]()
    first = post(webhook_client, gitlab("Merge Request Hook", payload))
    again = post(webhook_client, gitlab("Merge Request Hook", payload))  # a new delivery id
    assert first.status_code == 202 and again.json()["duplicate"] is True
    [job] = linked.jobs()
    assert job.conversation_key == "gitlab:gitlabhq/gitlab-test!1"
    subject = read_trigger(job.trigger)
    assert isinstance(subject, ReviewRequest) and subject.auto
    assert subject.draft is (event == "opened")
    assert (subject.number, subject.head_ref, subject.head_sha) == (1, "ms-viewport", HEAD)
    assert subject.reach["project_id"] == 1
    assert linked.callbacks() == []  # nothing said before the worker reads the opt-in


def test_opened_and_marked_ready_at_one_head_is_one_review(
    webhook_client: Any, linked: Any
) -> None:
    assert post(webhook_client, gitlab("Merge Request Hook", hook())).status_code == 202
    response = post(webhook_client, gitlab("Merge Request Hook", ready()))
    assert response.json()["duplicate"] is True and len(linked.jobs()) == 1


def test_a_draft_marked_ready_at_the_same_head_is_reviewed_when_ready(
    webhook_client: Any, linked: Any
) -> None:
    opened = hook(draft=True)
    assert post(webhook_client, gitlab("Merge Request Hook", opened)).status_code == 202
    assert post(webhook_client, gitlab("Merge Request Hook", ready())).status_code == 202
    subjects = [read_trigger(j.trigger) for j in linked.jobs()]
    assert [s.draft for s in subjects if isinstance(s, ReviewRequest)] == [True, False]


def test_new_commits_are_a_new_review(webhook_client: Any, linked: Any) -> None:
    assert post(webhook_client, gitlab("Merge Request Hook", hook())).status_code == 202
    pushed = hook("Merge_Request_Hook__new_commits", last_commit={"id": "b" * 40})
    assert post(webhook_client, gitlab("Merge Request Hook", pushed)).status_code == 202
    subjects = [read_trigger(job.trigger) for job in linked.jobs()]
    heads = {s.head_sha for s in subjects if isinstance(s, ReviewRequest) and s.auto}
    assert heads == {HEAD, "b" * 40}


@pytest.mark.parametrize(
    "item",
    [
        {"action": "update"},  # an edit: neither new commits nor marked ready
        {"action": "close"},
        {"action": "merge"},
        {"action": "approved"},
    ],
    ids=["edited", "closed", "merged", "approved"],
)
def test_other_merge_request_events_are_nothing(
    webhook_client: Any, linked: Any, item: dict[str, Any]
) -> None:
    payload = hook(**item)
    del payload["changes"]["draft"]
    assert post(webhook_client, gitlab("Merge Request Hook", payload)).status_code == 204
    assert linked.jobs() == []


@pytest.mark.parametrize(
    ("item", "user"),
    [
        ({"author_id": 9}, {"id": 9, "username": "resolver", "name": "Resolver"}),
        ({"source_branch": "resolver/7-fix"}, None),
    ],
    ids=["by-the-bot", "from-a-bot-branch"],
)
def test_the_bot_never_reviews_its_own_merge_requests(
    webhook_client: Any, linked: Any, item: dict[str, Any], user: dict[str, Any] | None
) -> None:
    payload = hook(**item)
    if user is not None:
        payload["user"] = user
    response = post(webhook_client, gitlab("Merge Request Hook", payload))
    assert response.status_code == 204 and linked.jobs() == []


def test_an_unlinked_author_gets_no_notice_for_an_auto_review(
    webhook_client: Any, store: Any
) -> None:
    response = post(webhook_client, gitlab("Merge Request Hook", hook()))
    assert response.status_code == 204  # nothing can run, nobody asked: no row
    assert store.jobs() == [] and store.notices() == [] and store.callbacks() == []
    assert store.deliveries() == []


def test_the_trigger_label_on_an_opened_merge_request_is_still_work(
    webhook_client: Any, store: Any
) -> None:
    store.link("gitlab", "1", "root")
    payload = hook()
    payload["changes"]["labels"] = {"previous": [], "current": [{"id": 1, "title": "resolver"}]}
    assert post(webhook_client, gitlab("Merge Request Hook", payload)).status_code == 202
    [job] = store.jobs()
    assert isinstance(read_trigger(job.trigger), PullRequest)
    assert job.conversation_key == "gitlab:gitlabhq/gitlab-test!1"
