"""A tagged comment on Linear has an id derived from its tag and trigger, so a later attempt finds
the comment whose answer was lost and edits it instead of commenting twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from integrations import registry
from integrations.linear.client import LinearClient
from integrations.linear.provider import LinearConversation, tagged_comment_id
from integrations.linear.standin.api import (
    UUID_V4,
    Actor,
    LinearAPI,
    LinearComment,
    LinearIssue,
    error_document,
)
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.triggers import read_trigger
from resolver.core.settings import get_settings
from tests.conftest import ResolverEnv
from tests.integrations.linear.conftest import (
    OAUTH_TOKEN,
    ORGANIZATION,
    comment_context,
    label_context,
    store_workspace_token,
)


@pytest.fixture
def since() -> datetime:
    return datetime.now(UTC) - timedelta(seconds=5)


def bot_comments(linear: LinearAPI, app: Actor) -> list[str]:
    return [c.body for c in linear.comments.values() if c.author == app]


def test_a_tagged_comment_is_found_by_its_whole_tag_only(
    conversation: LinearConversation, linear: LinearAPI, since: datetime
) -> None:
    ref = conversation.post("**Queued**", tag="status-12")
    assert UUID_V4.fullmatch(ref["comment_id"])
    assert linear.comments[ref["comment_id"]].body == "**Queued**"  # no visible tag
    assert conversation.find("status-12", since) == ref
    for other in ("status-1", "status-120", "notice-12"):
        assert conversation.find(other, since) is None


def test_a_comment_posted_without_a_tag_is_never_found(
    conversation: LinearConversation, issue: LinearIssue, trigger: LinearComment, since: datetime
) -> None:
    ref = conversation.post("Done: see the pull request")
    tagged = tagged_comment_id(get_settings().public_url, issue.id, "status-12", trigger.id)
    assert ref["comment_id"] != tagged
    assert conversation.find("status-12", since) is None


def test_someone_elses_comment_with_the_tags_id_is_never_found(
    conversation: LinearConversation,
    linear: LinearAPI,
    issue: LinearIssue,
    trigger: LinearComment,
    ann: Actor,
    since: datetime,
) -> None:
    """An id is anyone's to choose: only the bot's comment counts. Posting then fails rather
    than comment twice."""
    taken = tagged_comment_id(get_settings().public_url, issue.id, "status-12", trigger.id)
    linear.add_comment(issue, "Queued", ann, comment_id=taken)
    assert conversation.find("status-12", since) is None
    with pytest.raises(PermanentCallbackError, match="INVALID_INPUT"):
        conversation.post("Queued", tag="status-12")
    assert linear.comments[taken].author == ann


def test_a_lost_answer_is_found_and_edited_not_posted_twice(
    conversation: LinearConversation, linear: LinearAPI, app: Actor, since: datetime
) -> None:
    linear.fail("commentCreate", 503, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", tag="status-12")
    ref = conversation.find("status-12", since)
    assert ref is not None
    conversation.edit(ref, "**Running**")
    assert bot_comments(linear, app) == ["**Running**"]
    [lookup] = linear.calls("issue")
    assert lookup.variables["commentId"] == ref["comment_id"]


def test_the_same_tag_from_another_trigger_is_another_comment(
    conversation: LinearConversation,
    linear: LinearAPI,
    app: Actor,
    issue: LinearIssue,
    ann: Actor,
    since: datetime,
) -> None:
    """Job and callback ids start again after a database reset; a new trigger's `status-1` is
    then not the comment an old trigger's `status-1` was."""
    old = conversation.post("**Done**", tag="status-1")
    again = linear.add_comment(issue, "@resolver and the CSV export", ann)
    later = registry.conversation(
        "linear", read_trigger(comment_context(issue, again)), None, get_settings()
    )
    assert later.find("status-1", since) is None
    new = later.post("**Queued**", tag="status-1")
    assert new != old
    assert later.find("status-1", since) == new
    assert bot_comments(linear, app) == ["**Done**", "**Queued**"]


def test_a_label_trigger_finds_its_tagged_comment(
    env: ResolverEnv, app: Actor, issue: LinearIssue, since: datetime
) -> None:
    """A label trigger has no comment: the id is derived from when the label was added."""
    store_workspace_token(ORGANIZATION, OAUTH_TOKEN)
    labelled = {**label_context(issue), "updated_at": "2026-11-22T10:00:00.000Z"}
    conversation = registry.conversation("linear", read_trigger(labelled), None, get_settings())
    ref = conversation.post("Queued", tag="status-12")
    deployment = get_settings().public_url
    expected = tagged_comment_id(deployment, issue.id, "status-12", labelled["updated_at"])
    assert ref["comment_id"] == expected
    assert conversation.find("status-12", since) == ref
    relabelled = {**labelled, "updated_at": "2026-11-22T11:00:00.000Z"}
    assert (
        registry.conversation("linear", read_trigger(relabelled), None, get_settings()).find(
            "status-12", since
        )
        is None
    )


def test_ids_differ_by_deployment_issue_trigger_and_tag() -> None:
    ids = {
        tagged_comment_id(deployment, issue, tag, trigger)
        for deployment in ("https://resolver.acme.dev", "https://resolver.example.org")
        for issue in ("ENG-1", "ENG-12")
        for trigger in (None, "", "0e5a0b3c-7d2f-4c1e-9a8b-3f6d2e1c0b9a")
        for tag in ("status-1", "status-12", "status-120", "notice-12")
    }
    assert len(ids) == 48
    assert all(UUID_V4.fullmatch(i) for i in ids)
    assert tagged_comment_id("https://a.dev", "ENG-1", "reply-4", None) == tagged_comment_id(
        "https://a.dev", "ENG-1", "reply-4", None
    )


@pytest.mark.parametrize("tag", ["status", "12", "Status-12", "status-12\n", "status-12 "])
def test_a_string_that_is_not_a_tag_is_refused_before_any_call(
    conversation: LinearConversation, linear: LinearAPI, since: datetime, tag: str
) -> None:
    with pytest.raises(ValueError, match="not a message tag"):
        conversation.post("Queued", tag=tag)
    with pytest.raises(ValueError, match="not a message tag"):
        conversation.find(tag, since)
    assert linear.requests == []


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
        conversation.find("status-12", since)


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
