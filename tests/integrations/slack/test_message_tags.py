"""A tagged message in a Slack thread (`status-12`, `notice-3`): its tag rides in message
metadata, it is found again by that exact tag after a lost answer, and edited, not posted twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError

from integrations.slack.client import SlackClient, slack_session
from integrations.slack.provider import (
    SlackConversation,
    SlackThread,
    slack_ts,
    tag_metadata,
)
from integrations.slack.standin.api import Identity, Message, SlackAPI
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.core.settings import Settings
from tests.integrations.slack.conftest import ALICE, BOT_TOKEN, CHANNEL, TEAM_ID

# A little before the first post attempt, as the core passes it.
SINCE = datetime.now(UTC) - timedelta(minutes=1)
LATER = datetime.now(UTC) + timedelta(hours=1)


@pytest.fixture
def parent(slack_api: SlackAPI) -> str:
    return slack_api.add_message(CHANNEL, ALICE, "<@U0BOT> fix the build")


@pytest.fixture
def chat(client: SlackClient, parent: str) -> SlackConversation:
    return SlackConversation(client, SlackThread(TEAM_ID, CHANNEL, parent, parent))


def bots_replies(slack_api: SlackAPI, parent: str, bot: Identity) -> list[Message]:
    return [m for m in slack_api.thread(CHANNEL, parent) if m.user == bot.user_id]


def test_a_tagged_message_carries_its_tag_in_metadata_people_do_not_see(
    chat: SlackConversation, slack_api: SlackAPI
) -> None:
    ref = chat.post("**Queued** · [details](https://resolver.test/jobs/12)", tag="status-12")

    posted = slack_api.channels[CHANNEL].messages[ref["ts"]]
    assert posted.text == "*Queued* · <https://resolver.test/jobs/12|details>"
    assert posted.metadata == {
        "event_type": "resolver_message",
        "event_payload": {"tag": "status-12"},
    }


def test_a_tagged_message_is_found_by_its_tag(chat: SlackConversation, slack_api: SlackAPI) -> None:
    ref = chat.post("Queued", tag="status-12")

    assert chat.find("status-12", SINCE) == ref
    [asked] = slack_api.calls("conversations.replies")
    assert asked.params["oldest"] == slack_ts(SINCE)
    assert asked.params["include_all_metadata"] == "1"


@pytest.mark.parametrize("other", ["status-1", "status-120", "status-2", "notice-12", "reply-12"])
def test_a_message_with_another_tag_is_not_found(chat: SlackConversation, other: str) -> None:
    chat.post("Queued", tag="status-12")
    assert chat.find(other, SINCE) is None


def test_messages_of_different_kinds_with_the_same_number_are_told_apart(
    chat: SlackConversation,
) -> None:
    status = chat.post("Queued", tag="status-12")
    notice = chat.post("The budget is spent", tag="notice-12")

    assert chat.find("status-12", SINCE) == status
    assert chat.find("notice-12", SINCE) == notice


def test_a_message_posted_without_a_tag_is_never_found(
    chat: SlackConversation, slack_api: SlackAPI
) -> None:
    ref = chat.post("Queued")

    assert slack_api.channels[CHANNEL].messages[ref["ts"]].metadata is None
    assert chat.find("status-12", SINCE) is None


@pytest.mark.parametrize(
    ("user", "bot_id"),
    [("U0ALERTS", "B0ALERTS"), (ALICE, None)],
    ids=["another-app", "a-person"],
)
def test_someone_elses_message_with_the_same_tag_is_never_found(
    chat: SlackConversation, slack_api: SlackAPI, parent: str, user: str, bot_id: str | None
) -> None:
    slack_api.add_message(
        CHANNEL, user, "Queued", thread_ts=parent, bot_id=bot_id, metadata=tag_metadata("status-12")
    )
    assert chat.find("status-12", SINCE) is None


@pytest.mark.parametrize(
    "metadata",
    [
        {"event_type": "resolver_message", "event_payload": {"tag": "status-12", "job": 12}},
        {"event_type": "deploy_started", "event_payload": {"tag": "status-12"}},
        {"event_type": "resolver_status", "event_payload": {"job_id": 12}},
    ],
    ids=["more-in-the-payload", "another-event-type", "a-job-id"],
)
def test_the_bots_message_is_found_only_when_its_metadata_is_exactly_the_tag(
    chat: SlackConversation,
    slack_api: SlackAPI,
    parent: str,
    bot: Identity,
    metadata: dict[str, Any],
) -> None:
    slack_api.add_message(
        CHANNEL, bot.user_id, "Queued", thread_ts=parent, bot_id=bot.bot_id, metadata=metadata
    )
    assert chat.find("status-12", SINCE) is None


def test_a_tagged_message_posted_before_since_is_not_found(chat: SlackConversation) -> None:
    chat.post("Queued", tag="status-12")
    assert chat.find("status-12", LATER) is None


@pytest.mark.parametrize("tag", ["status 12", "Status-12", "status-", "status-12\n", "12"])
def test_a_malformed_tag_is_a_bug_and_nothing_is_sent(
    chat: SlackConversation, slack_api: SlackAPI, tag: str
) -> None:
    with pytest.raises(ValueError, match="not a message tag"):
        chat.post("Queued", tag=tag)
    with pytest.raises(ValueError, match="not a message tag"):
        chat.find(tag, SINCE)
    assert slack_api.calls("chat.postMessage") == []
    assert slack_api.calls("conversations.replies") == []


def test_a_lost_answer_is_found_and_edited_not_posted_twice(
    chat: SlackConversation, slack_api: SlackAPI, parent: str, bot: Identity
) -> None:
    slack_api.fail("chat.postMessage", 503, applied=True)
    with pytest.raises(TransientCallbackError):
        chat.post("Queued", tag="status-12")

    ref = chat.find("status-12", SINCE)
    assert ref is not None
    chat.edit(ref, "**Done** in 2m")

    assert [(m.ts, m.text) for m in bots_replies(slack_api, parent, bot)] == [
        (ref["ts"], "*Done* in 2m")
    ]


def test_edits_keep_the_tag(chat: SlackConversation, slack_api: SlackAPI) -> None:
    ref = chat.post("Queued", tag="status-12")

    chat.edit(ref, "Working")
    chat.edit(ref, "Done")

    assert chat.find("status-12", SINCE) == ref
    assert all("metadata" not in r.params for r in slack_api.calls("chat.update"))


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (503, TransientCallbackError),
        (429, TransientCallbackError),
        ("ratelimited", TransientCallbackError),
        ("channel_not_found", PermanentCallbackError),
        (403, PermanentCallbackError),
    ],
    ids=str,
)
def test_find_errors_are_mapped(
    chat: SlackConversation, slack_api: SlackAPI, fault: int | str, error: type[CallbackError]
) -> None:
    slack_api.fail("conversations.replies", fault)
    with pytest.raises(error, match=r"to conversations\.replies"):
        chat.find("status-12", SINCE)


# --- the stand-in keeps Slack's metadata rules ---------------------------------------------


def test_a_thread_read_without_include_all_metadata_shows_the_event_type_only(
    chat: SlackConversation, client: SlackClient, parent: str
) -> None:
    chat.post("Queued", tag="status-12")

    [_, reply] = client.thread(CHANNEL, parent, 10)

    assert reply["metadata"] == {"event_type": "resolver_message"}


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ('{"event_type": "resolver_message", ', "invalid_metadata_format"),
        ('["resolver_message"]', "invalid_metadata_format"),
        ('{"event_type": "resolver_message"}', "invalid_metadata_schema"),
        ('{"event_type": "resolver_message", "event_payload": 12}', "invalid_metadata_schema"),
    ],
    ids=["unfinished-json", "not-an-object", "no-payload", "payload-not-an-object"],
)
def test_malformed_metadata_is_refused_with_slacks_error(
    settings: Settings, slack_api: SlackAPI, metadata: str, code: str
) -> None:
    api = slack_session(settings, BOT_TOKEN)
    form = {"channel": CHANNEL, "text": "Queued", "metadata": metadata}
    with pytest.raises(SlackApiError) as refused:
        api.api_call("chat.postMessage", data=form)
    assert refused.value.response["error"] == code
    assert slack_api.channels[CHANNEL].messages == {}


def test_an_update_with_empty_metadata_removes_it(
    chat: SlackConversation, settings: Settings, slack_api: SlackAPI
) -> None:
    ref = chat.post("Queued", tag="status-12")
    api = slack_session(settings, BOT_TOKEN)

    api.api_call("chat.update", data={**ref, "text": "Done", "metadata": "{}"})

    assert slack_api.channels[CHANNEL].messages[ref["ts"]].metadata is None
    assert chat.find("status-12", SINCE) is None


def test_a_client_mistake_in_metadata_is_permanent(client: SlackClient) -> None:
    with pytest.raises(PermanentCallbackError, match="invalid_metadata_schema"):
        client.post(CHANNEL, None, "Queued", {"event_type": "resolver_message"})
