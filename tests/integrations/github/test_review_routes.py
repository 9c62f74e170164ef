"""GitHub's pull request events for auto-reviews: one quiet job per head for a linked author
(no 👀, no status message: the worker reads the opt-in first), nothing for the bot's own pull
requests, and no notice to an author who is not linked. A mention asking for a review is a
review request; other mentions stay work."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from resolver.contract.triggers import PullRequest, ReviewRequest, read_trigger
from tests.integrations.deliveries import github, load, post

CODERTOCAT = "21031067"


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("github", CODERTOCAT, "Codertocat")
    return store


def opened(**pull: Any) -> dict[str, Any]:
    payload = copy.deepcopy(load("github", "pull_request.opened__plain"))
    payload["pull_request"].update(pull)
    return payload


@pytest.mark.parametrize("action", ["opened", "ready_for_review", "synchronize"])
def test_a_pull_request_event_is_one_quiet_auto_review_per_head(
    client: Any, linked: Any, action: str
) -> None:
    payload = opened(draft=True)
    payload["action"] = action
    first = post(client, github(f"pull_request.{action}", payload))
    again = post(client, github(f"pull_request.{action}", payload))  # a new delivery id
    assert first.status_code == 202 and again.json()["duplicate"] is True
    [job] = linked.jobs()
    subject = read_trigger(job.trigger)
    assert isinstance(subject, ReviewRequest) and subject.auto and subject.draft
    assert (subject.number, subject.head_ref) == (2, "changes")
    assert linked.callbacks() == []  # nothing said before the worker reads the opt-in


def test_a_draft_marked_ready_at_the_same_head_is_reviewed_when_ready(
    client: Any, linked: Any
) -> None:
    """The draft's auto-review is skipped by default: being ready is a review of its own, at
    the same head; a second ready at that head is the same one."""
    assert post(client, github("pull_request.opened", opened(draft=True))).status_code == 202
    ready = opened(draft=False)
    ready["action"] = "ready_for_review"
    assert post(client, github("pull_request.ready_for_review", ready)).status_code == 202
    again = post(client, github("pull_request.ready_for_review", ready))
    assert again.json()["duplicate"] is True
    drafts = [read_trigger(j.trigger) for j in linked.jobs()]
    assert [s.draft for s in drafts if isinstance(s, ReviewRequest)] == [True, False]


@pytest.mark.parametrize(
    "pull",
    [
        {"user": {"login": "resolver[bot]", "id": 9, "type": "Bot"}},
        {"head": {"ref": "resolver/7-fix", "sha": "abc"}},
    ],
    ids=["by-the-bot", "from-a-bot-branch"],
)
def test_the_bot_never_reviews_its_own_pull_requests(
    client: Any, linked: Any, pull: dict[str, Any]
) -> None:
    response = post(client, github("pull_request.opened", opened(**pull)))
    assert response.status_code == 204 and linked.jobs() == []


def test_an_unlinked_author_gets_no_notice_for_an_auto_review(client: Any, store: Any) -> None:
    response = post(client, github("pull_request.opened", opened()))
    assert response.status_code == 204  # nothing can run, nobody asked: no row
    assert store.jobs() == [] and store.notices() == [] and store.callbacks() == []
    assert store.deliveries() == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [("@resolver review this PR please", ReviewRequest), ("@resolver fix it", PullRequest)],
)
def test_a_mention_asking_for_a_review_is_a_review_request(
    client: Any, linked: Any, text: str, kind: type
) -> None:
    payload = load("github", "issue_comment.created__on_pull_request")
    payload["comment"]["body"] = text
    assert post(client, github("issue_comment.created", payload)).status_code == 202
    [job] = linked.jobs()
    subject = read_trigger(job.trigger)
    assert type(subject) is kind and not getattr(subject, "auto", False)
