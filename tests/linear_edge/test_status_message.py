"""A job's status comment on Linear has an id derived from the job, so a later attempt finds the
comment whose answer was lost and edits it instead of commenting twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from integrations.linear.client import LinearClient
from integrations.linear.provider import LinearConversation, status_comment_id
from resolver.callback_errors import PermanentCallbackError, TransientCallbackError
from resolver.config import get_settings
from tests.linear_edge.conftest import OAUTH_TOKEN
from tests.support.linear_api import UUID_V4, Actor, LinearAPI, LinearIssue, error_document


@pytest.fixture
def since() -> datetime:
    return datetime.now(UTC) - timedelta(seconds=5)


def bot_comments(linear: LinearAPI, app: Actor) -> list[str]:
    return [c.body for c in linear.comments.values() if c.author == app]


def test_a_status_comment_is_found_by_its_job_only(
    conversation: LinearConversation, linear: LinearAPI, since: datetime
) -> None:
    ref = conversation.post("**Queued**", status_of=12)
    assert UUID_V4.fullmatch(ref["comment_id"])
    assert linear.comments[ref["comment_id"]].body == "**Queued**"  # no visible tag
    assert conversation.find_status(12, since) == ref
    assert conversation.find_status(1, since) is None
    assert conversation.find_status(120, since) is None


def test_a_comment_posted_without_a_job_is_never_found(
    conversation: LinearConversation, issue: LinearIssue, since: datetime
) -> None:
    ref = conversation.post("Done: see the pull request")
    assert ref["comment_id"] != status_comment_id(get_settings().public_url, issue.id, 12)
    assert conversation.find_status(12, since) is None


def test_someone_elses_comment_with_the_jobs_id_is_never_found(
    conversation: LinearConversation,
    linear: LinearAPI,
    issue: LinearIssue,
    ann: Actor,
    since: datetime,
) -> None:
    """An id is anyone's to choose: only the bot's comment counts. Posting then fails rather
    than comment twice."""
    taken = status_comment_id(get_settings().public_url, issue.id, 12)
    linear.add_comment(issue, "Queued", ann, comment_id=taken)
    assert conversation.find_status(12, since) is None
    with pytest.raises(PermanentCallbackError, match="INVALID_INPUT"):
        conversation.post("Queued", status_of=12)
    assert linear.comments[taken].author == ann


def test_a_lost_answer_is_found_and_edited_not_posted_twice(
    conversation: LinearConversation, linear: LinearAPI, app: Actor, since: datetime
) -> None:
    linear.fail("commentCreate", 503, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", status_of=12)
    ref = conversation.find_status(12, since)
    assert ref is not None
    conversation.edit(ref, "**Running**")
    assert bot_comments(linear, app) == ["**Running**"]
    [lookup] = linear.calls("issue")
    assert lookup.variables["commentId"] == ref["comment_id"]


def test_ids_differ_by_deployment_issue_and_job() -> None:
    ids = {
        status_comment_id(deployment, issue, job)
        for deployment in ("https://resolver.acme.dev", "https://resolver.example.org")
        for issue in ("ENG-1", "ENG-12")
        for job in (1, 12, 120)
    }
    assert len(ids) == 12
    assert all(UUID_V4.fullmatch(i) for i in ids)
    assert status_comment_id("https://a.dev", "ENG-1", 12) == status_comment_id(
        "https://a.dev", "ENG-1", 12
    )


@pytest.mark.parametrize(
    ("status", "body", "fate"),
    [
        (502, None, TransientCallbackError),
        (200, error_document("Rate limit exceeded", "RATELIMITED"), TransientCallbackError),
        (400, error_document("Argument Validation Error", "INVALID_INPUT"), PermanentCallbackError),
        (403, error_document("Forbidden", "FORBIDDEN"), PermanentCallbackError),
    ],
)
def test_a_failed_lookup_has_the_fate_of_any_call(
    conversation: LinearConversation,
    linear: LinearAPI,
    since: datetime,
    status: int,
    body: object,
    fate: type[Exception],
) -> None:
    linear.fail("issue", status, body=body)
    with pytest.raises(fate):
        conversation.find_status(12, since)


@pytest.mark.parametrize(
    "chosen",
    [
        "not-a-uuid",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8",  # version 1
        "{0e5a0b3c-7d2f-4c1e-9a8b-3f6d2e1c0b9a}",
    ],
)
def test_linear_refuses_an_id_that_is_not_a_uuid_v4(
    linear: LinearAPI, app: Actor, issue: LinearIssue, chosen: str
) -> None:
    client = LinearClient(linear.url, OAUTH_TOKEN)
    with pytest.raises(PermanentCallbackError, match="INVALID_INPUT"):
        client.create_comment(issue.id, "Queued", comment_id=chosen)
    assert linear.comments == {}
