"""GitHub: a review of the bot's own pull request is one job, whichever of its deliveries
(the review, each of its comments) comes first; reviews that ask nothing make none."""

from __future__ import annotations

from typing import Any

import pytest

from integrations.github.routes import REVIEW_TASK
from resolver.contract.triggers import ReviewBatch, read_trigger
from tests.integrations.deliveries import github, load, post

CODERTOCAT = "21031067"
REVIEW_ID = 237895671


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("github", CODERTOCAT, "Codertocat")
    return store


def review(state: str = "changes_requested", body: str = "", author: str = "resolver[bot]") -> Any:
    payload = load("github", "pull_request_review.submitted__approved")
    payload["review"].update(id=REVIEW_ID, state=state, body=body)
    payload["pull_request"]["user"].update(login=author)
    return payload


def review_comment(body: str, comment_id: int) -> Any:
    payload = load("github", "pull_request_review_comment.created__on_diff")
    payload["comment"].update(id=comment_id, body=body, pull_request_review_id=REVIEW_ID)
    payload["pull_request"]["user"].update(login="resolver[bot]")
    return payload


@pytest.mark.parametrize("state", ["changes_requested", "commented"])
def test_a_review_of_the_bots_pull_request_is_a_job_without_a_mention(
    client: Any, linked: Any, state: str
) -> None:
    answer = post(client, github("pull_request_review.submitted", review(state)))

    assert answer.status_code == 202
    [job] = linked.jobs()
    trigger = read_trigger(job.trigger)
    assert job.task == REVIEW_TASK and isinstance(trigger, ReviewBatch)
    assert trigger.review_id == REVIEW_ID and trigger.part["comment_kind"] == "review"
    [delivery] = linked.deliveries()
    assert delivery.delivery_key == f"review:Codertocat/Hello-World:{REVIEW_ID}"


@pytest.mark.parametrize(
    "payload",
    [
        review("approved"),  # an approval asks for nothing
        review(author="Codertocat"),  # not the bot's pull request
        review("dismissed"),
    ],
)
def test_reviews_that_ask_the_bot_nothing_make_no_job(
    client: Any, linked: Any, payload: Any
) -> None:
    assert post(client, github("pull_request_review.submitted", payload)).status_code == 204
    assert linked.jobs() == [] and linked.deliveries() == []


def test_a_mention_in_an_approval_still_asks(client: Any, linked: Any) -> None:
    payload = review("approved", "@resolver squash the typo too", author="Codertocat")
    assert post(client, github("pull_request_review.submitted", payload)).status_code == 202
    [job] = linked.jobs()
    assert job.task == "squash the typo too"
    assert isinstance(read_trigger(job.trigger), ReviewBatch)


def test_the_deliveries_of_one_review_make_one_job(client: Any, linked: Any) -> None:
    answers = [
        post(client, github("pull_request_review_comment.created", review_comment(text, n)))
        for n, text in [(1, "@resolver rename x"), (2, "@resolver and y")]
    ]
    answers.append(post(client, github("pull_request_review.submitted", review())))
    answers.append(
        post(client, github("pull_request_review_comment.created", review_comment("no mention", 3)))
    )

    assert [a.status_code for a in answers] == [202, 200, 200, 204]
    assert [a.json().get("duplicate") for a in answers[:3]] == [None, True, True]
    [job] = linked.jobs()
    assert {a.json()["job_id"] for a in answers[:3]} == {job.id}
    assert answers[3].status_code == 204
    assert job.task == "rename x" and isinstance(read_trigger(job.trigger), ReviewBatch)
    assert len(linked.deliveries()) == 1
