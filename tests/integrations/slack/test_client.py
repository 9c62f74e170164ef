"""SlackClient against the local Slack Web API: what each call leaves behind on Slack's side."""

from __future__ import annotations

import pytest

from integrations.slack.client import PAGE_SIZE, BotIdentity, SlackClient
from integrations.slack.mrkdwn import CUT_MARKER, TEXT_LIMIT
from integrations.slack.standin.api import Identity, SlackAPI
from resolver.contract.errors import PermanentCallbackError
from resolver.core.settings import Settings
from tests.integrations.slack.conftest import ALICE, BOT_TOKEN, CHANNEL


def test_post_replies_in_the_thread(
    client: SlackClient, slack_api: SlackAPI, bot: Identity
) -> None:
    parent = slack_api.add_message(CHANNEL, ALICE, "<@U0BOT> fix the build")

    ts = client.post(CHANNEL, parent, "*Queued*")

    thread = slack_api.thread(CHANNEL, parent)
    assert [(m.ts, m.user, m.bot_id, m.text) for m in thread[1:]] == [
        (ts, bot.user_id, bot.bot_id, "*Queued*")
    ]
    assert thread[1].thread_ts == parent
    sent = slack_api.calls("chat.postMessage")[0]
    assert sent.params["unfurl_links"] is False  # a status message stays one line tall


def test_every_call_carries_the_token_in_the_authorization_header(
    client: SlackClient, slack_api: SlackAPI
) -> None:
    ts = client.post(CHANNEL, None, "Queued")
    client.add_reaction(CHANNEL, ts)
    client.thread(CHANNEL, ts, 10)
    assert {r.headers["authorization"] for r in slack_api.requests} == {f"Bearer {BOT_TOKEN}"}
    assert all("token" not in r.params for r in slack_api.requests)


def test_update_edits_the_message_in_place(client: SlackClient, slack_api: SlackAPI) -> None:
    parent = slack_api.add_message(CHANNEL, ALICE, "<@U0BOT> fix it")
    ts = client.post(CHANNEL, parent, "Queued")

    client.update(CHANNEL, ts, "Working (step 3)")
    client.update(CHANNEL, ts, "Done in 2m 3s")

    replies = slack_api.thread(CHANNEL, parent)[1:]
    assert [(m.ts, m.text) for m in replies] == [(ts, "Done in 2m 3s")]
    assert replies[0].edited_ts is not None


def test_editing_someone_elses_message_is_permanent(
    client: SlackClient, slack_api: SlackAPI
) -> None:
    ts = slack_api.add_message(CHANNEL, ALICE, "mine")
    with pytest.raises(PermanentCallbackError) as failed:
        client.update(CHANNEL, ts, "hijacked")
    assert str(failed.value) == "Slack answered cant_update_message to chat.update (HTTP 200)"
    assert slack_api.channels[CHANNEL].messages[ts].text == "mine"


def test_editing_a_deleted_message_is_permanent(client: SlackClient) -> None:
    with pytest.raises(PermanentCallbackError, match=r"message_not_found to chat\.update"):
        client.update(CHANNEL, "1.000001", "gone")


def test_the_eyes_reaction_is_idempotent(
    client: SlackClient, slack_api: SlackAPI, bot: Identity
) -> None:
    ts = slack_api.add_message(CHANNEL, ALICE, "<@U0BOT> fix it")

    client.add_reaction(CHANNEL, ts, "eyes")
    client.add_reaction(CHANNEL, ts, "eyes")  # a retried task: Slack says already_reacted

    assert slack_api.channels[CHANNEL].messages[ts].reactions == {"eyes": [bot.user_id]}
    assert [r.error for r in slack_api.calls("reactions.add")] == [None, "already_reacted"]


def test_reacting_to_a_missing_message_is_permanent(client: SlackClient) -> None:
    with pytest.raises(PermanentCallbackError, match=r"message_not_found to reactions\.add"):
        client.add_reaction(CHANNEL, "1.000001")


def test_a_text_over_slacks_limit_is_cut_with_a_marker(
    client: SlackClient, slack_api: SlackAPI
) -> None:
    ts = client.post(CHANNEL, None, "line\n" * TEXT_LIMIT)
    client.update(CHANNEL, ts, "y" * (TEXT_LIMIT + 5))
    sent = [r.params["text"] for r in slack_api.requests if "text" in r.params]
    assert all(len(text) <= TEXT_LIMIT and text.endswith(CUT_MARKER) for text in sent)
    assert slack_api.channels[CHANNEL].messages[ts].text.startswith("y" * 1000)


def test_an_empty_text_is_refused_before_calling_slack(
    client: SlackClient, slack_api: SlackAPI
) -> None:
    with pytest.raises(PermanentCallbackError, match="the text is empty"):
        client.post(CHANNEL, None, " \n")
    assert slack_api.requests == []


def test_identity_is_asked_once(client: SlackClient, slack_api: SlackAPI, bot: Identity) -> None:
    assert client.identity().user_id == bot.user_id
    assert client.identity().bot_id == bot.bot_id
    assert len(slack_api.calls("auth.test")) == 1


def test_a_person_token_has_no_bot_id(settings: Settings, slack_api: SlackAPI) -> None:
    slack_api.add_bot("xoxp-person", user_id="U0PERSON", bot_id=None)
    assert SlackClient(settings, "xoxp-person").identity() == BotIdentity("U0PERSON", None)


def _long_thread(api: SlackAPI, replies: int) -> tuple[str, list[str]]:
    parent = api.add_message(CHANNEL, ALICE, "message 0")
    texts = [f"message {n}" for n in range(1, replies + 1)]
    for text in texts:
        api.add_message(CHANNEL, ALICE, text, thread_ts=parent)
    return parent, ["message 0", *texts]


@pytest.mark.parametrize("parent_on_every_page", [True, False])
def test_a_long_thread_is_read_to_the_end_and_bounded(
    client: SlackClient, slack_api: SlackAPI, parent_on_every_page: bool
) -> None:
    slack_api.parent_on_every_page = parent_on_every_page
    parent, texts = _long_thread(slack_api, 2 * PAGE_SIZE + 30)

    thread = client.thread(CHANNEL, parent, 50)

    assert [m["text"] for m in thread] == [texts[0], *texts[-49:]]
    pages = slack_api.calls("conversations.replies")
    assert len(pages) == 3
    assert [bool(p.params.get("cursor")) for p in pages] == [False, True, True]


def test_a_short_thread_is_returned_whole(client: SlackClient, slack_api: SlackAPI) -> None:
    parent, texts = _long_thread(slack_api, 3)
    assert [m["text"] for m in client.thread(CHANNEL, parent, 50)] == texts
    assert [m["text"] for m in client.thread(CHANNEL, parent, 1)] == texts[:1]


def test_a_missing_thread_is_permanent(client: SlackClient) -> None:
    with pytest.raises(PermanentCallbackError, match="thread_not_found"):
        client.thread(CHANNEL, "1.000001", 50)
