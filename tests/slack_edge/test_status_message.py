"""A job's status message in a Slack thread: tagged with message metadata when posted, found
again by its job after a lost answer, and edited instead of posted twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk.errors import SlackApiError

from integrations.slack.client import SlackClient, slack_session
from integrations.slack.provider import (
    SlackConversation,
    SlackThread,
    slack_ts,
    status_metadata,
)
from resolver.callback_errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.config import Settings
from tests.slack_edge.conftest import ALICE, BOT_TOKEN, CHANNEL, TEAM_ID
from tests.support.slack_api import Identity, Message, SlackAPI

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


def test_a_status_message_is_tagged_with_metadata_people_do_not_see(
    chat: SlackConversation, slack_api: SlackAPI
) -> None:
    ref = chat.post("**Queued** · [details](https://resolver.test/jobs/12)", status_of=12)

    posted = slack_api.channels[CHANNEL].messages[ref["ts"]]
    assert posted.text == "*Queued* · <https://resolver.test/jobs/12|details>"
    assert posted.metadata == {"event_type": "resolver_status", "event_payload": {"job_id": 12}}


def test_a_status_message_is_found_by_its_job(chat: SlackConversation, slack_api: SlackAPI) -> None:
    ref = chat.post("Queued", status_of=12)

    assert chat.find_status(12, SINCE) == ref
    [asked] = slack_api.calls("conversations.replies")
    assert asked.params["oldest"] == slack_ts(SINCE)
    assert asked.params["include_all_metadata"] == "1"


@pytest.mark.parametrize("other_job", [1, 120, 2])
def test_another_jobs_status_message_is_not_found(chat: SlackConversation, other_job: int) -> None:
    chat.post("Queued", status_of=12)
    assert chat.find_status(other_job, SINCE) is None


def test_a_message_posted_without_status_of_is_never_found(
    chat: SlackConversation, slack_api: SlackAPI
) -> None:
    ref = chat.post("Queued")

    assert slack_api.channels[CHANNEL].messages[ref["ts"]].metadata is None
    assert chat.find_status(12, SINCE) is None


@pytest.mark.parametrize(
    ("user", "bot_id"),
    [("U0ALERTS", "B0ALERTS"), (ALICE, None)],
    ids=["another-app", "a-person"],
)
def test_someone_elses_message_with_the_same_tag_is_never_found(
    chat: SlackConversation, slack_api: SlackAPI, parent: str, user: str, bot_id: str | None
) -> None:
    slack_api.add_message(
        CHANNEL, user, "Queued", thread_ts=parent, bot_id=bot_id, metadata=status_metadata(12)
    )
    assert chat.find_status(12, SINCE) is None


def test_a_status_message_posted_before_since_is_not_found(chat: SlackConversation) -> None:
    chat.post("Queued", status_of=12)
    assert chat.find_status(12, LATER) is None


def test_a_lost_answer_is_found_and_edited_not_posted_twice(
    chat: SlackConversation, slack_api: SlackAPI, parent: str, bot: Identity
) -> None:
    slack_api.fail("chat.postMessage", 503, applied=True)
    with pytest.raises(TransientCallbackError):
        chat.post("Queued", status_of=12)

    ref = chat.find_status(12, SINCE)
    assert ref is not None
    chat.edit(ref, "**Done** in 2m")

    assert [(m.ts, m.text) for m in bots_replies(slack_api, parent, bot)] == [
        (ref["ts"], "*Done* in 2m")
    ]


def test_edits_keep_the_tag(chat: SlackConversation, slack_api: SlackAPI) -> None:
    ref = chat.post("Queued", status_of=12)

    chat.edit(ref, "Working")
    chat.edit(ref, "Done")

    assert chat.find_status(12, SINCE) == ref
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
def test_find_status_errors_are_mapped(
    chat: SlackConversation, slack_api: SlackAPI, fault: int | str, error: type[CallbackError]
) -> None:
    slack_api.fail("conversations.replies", fault)
    with pytest.raises(error, match=r"to conversations\.replies"):
        chat.find_status(12, SINCE)


# --- the stand-in keeps Slack's metadata rules ---------------------------------------------


def test_a_thread_read_without_include_all_metadata_shows_the_event_type_only(
    chat: SlackConversation, client: SlackClient, parent: str
) -> None:
    chat.post("Queued", status_of=12)

    [_, reply] = client.thread(CHANNEL, parent, 10)

    assert reply["metadata"] == {"event_type": "resolver_status"}


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ('{"event_type": "resolver_status", ', "invalid_metadata_format"),
        ('["resolver_status"]', "invalid_metadata_format"),
        ('{"event_type": "resolver_status"}', "invalid_metadata_schema"),
        ('{"event_type": "resolver_status", "event_payload": 12}', "invalid_metadata_schema"),
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
    ref = chat.post("Queued", status_of=12)
    api = slack_session(settings, BOT_TOKEN)

    api.api_call("chat.update", data={**ref, "text": "Done", "metadata": "{}"})

    assert slack_api.channels[CHANNEL].messages[ref["ts"]].metadata is None
    assert chat.find_status(12, SINCE) is None


def test_a_client_mistake_in_metadata_is_permanent(client: SlackClient) -> None:
    with pytest.raises(PermanentCallbackError, match="invalid_metadata_schema"):
        client.post(CHANNEL, None, "Queued", {"event_type": "resolver_status"})
