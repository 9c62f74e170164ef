"""Review batches on Azure Repos, without a network: a mention on the bot's own pull request is
a review batch, and the mentions one person publishes there within one window share its
delivery row (one job), which reads the threads once the window has closed; a command, a
review request, another person, the next window or another pull request is not that job."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from integrations.azuredevops.routes import GATHER_GRACE, REVIEW_WINDOW
from integrations.azuredevops.trigger import part_of
from resolver.contract.triggers import PullRequest, ReviewBatch
from tests.integrations.azuredevops.deliveries import load
from tests.integrations.azuredevops.test_webhooks import trigger

ON_BOTS = "ms.vss-code.git-pullrequest-comment-event__on_the_bots_pull_request"
PUBLISHED = datetime(2026, 11, 20, 9, 52, 31, 170000, tzinfo=UTC)


def comment(
    text: str = "@resolver please keep add() documented",
    *,
    at: datetime = PUBLISHED,
    author: str | None = None,
    number: int | None = None,
    comment_id: int = 2,
) -> dict[str, Any]:
    payload = copy.deepcopy(load(ON_BOTS))
    written = payload["resource"]["comment"]
    written.update(content=text, id=comment_id, publishedDate=at.isoformat())
    if author is not None:
        written["author"].update(id=author, uniqueName=f"{author}@contoso.com")
    if number is not None:
        payload["resource"]["pullRequest"]["pullRequestId"] = number
    return payload


def test_a_mention_on_the_bots_pull_request_is_a_review_batch_gathered_for_a_window() -> None:
    found = trigger(ON_BOTS)
    subject = found.subject
    assert isinstance(subject, ReviewBatch)
    assert found.task == "please keep add() documented"
    assert subject.gather_until == PUBLISHED + REVIEW_WINDOW + GATHER_GRACE
    assert (subject.number, subject.comment_id, part_of(subject).thread_id) == (1, 2, 6)
    assert found.conversation_key == "azuredevops:Widgets/widgets!1"
    assert found.once_key is not None and found.once_key.startswith("review:")


def test_one_persons_mentions_in_one_window_are_one_delivery() -> None:
    start = datetime.fromtimestamp(
        PUBLISHED.timestamp() // REVIEW_WINDOW.total_seconds() * REVIEW_WINDOW.total_seconds(),
        UTC,
    )
    first = trigger(ON_BOTS, comment(at=start, comment_id=2))
    same = [
        trigger(ON_BOTS, comment("@resolver name it `total`", at=at, comment_id=n))
        for n, at in ((3, start + timedelta(seconds=20)), (4, start + REVIEW_WINDOW * 0.99))
    ]
    assert {t.once_key for t in same} == {first.once_key}
    others = [
        trigger(ON_BOTS, comment(at=start + REVIEW_WINDOW)),  # the next window
        trigger(ON_BOTS, comment(at=start, author="bob")),  # another person
        trigger(ON_BOTS, comment(at=start, number=2)),  # another pull request
    ]
    assert len({first.once_key, *(t.once_key for t in others)}) == 4


def test_every_mention_of_a_window_is_gathered_before_its_job_reads_the_threads() -> None:
    """Whichever mention of a window makes its job, its job waits past the window's end."""
    start = datetime.fromtimestamp(
        PUBLISHED.timestamp() // REVIEW_WINDOW.total_seconds() * REVIEW_WINDOW.total_seconds(),
        UTC,
    )
    for offset in (timedelta(0), REVIEW_WINDOW / 2, REVIEW_WINDOW * 0.99):
        subject = trigger(ON_BOTS, comment(at=start + offset)).subject
        assert isinstance(subject, ReviewBatch) and subject.gather_until is not None
        assert subject.gather_until >= start + REVIEW_WINDOW + GATHER_GRACE


@pytest.mark.parametrize("text", ["@resolver stop", "@resolver rebase", "@resolver review"])
def test_a_command_or_a_review_request_on_the_bots_pull_request_is_no_batch(text: str) -> None:
    found = trigger(ON_BOTS, comment(text))
    assert type(found.subject) is PullRequest
    assert found.once_key == f"comment:{found.subject.part['repository_id']}:2"


def test_a_mention_on_someone_elses_pull_request_is_no_batch() -> None:
    found = trigger("ms.vss-code.git-pullrequest-comment-event__in_thread")
    assert type(found.subject) is PullRequest
