"""The `slack` provider end to end: a recorded mention routed into a trigger context, the stored
bot token, and what the conversation leaves in the thread on the Slack stand-in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import integrations.slack
from integrations.registry import conversation
from integrations.registry import get as provider
from integrations.slack.client import BotIdentity
from integrations.slack.events import parse_event
from integrations.slack.provider import HISTORY_LIMIT, build_history
from integrations.slack.routes import ROUTES
from integrations.slack.standin.api import SlackAPI
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.inbound import Policy, Trigger, route_event
from resolver.contract.outbound import Comment
from resolver.contract.triggers import dump_trigger, read_trigger
from resolver.core.settings import Settings, get_settings
from tests.integrations.slack.conftest import BOT_TOKEN, store_bot_token

FIXTURES = Path(integrations.slack.__file__).with_name("fixtures")
POLICY = Policy(bot_name="resolver", trigger_label="resolver")
# The workspace, channel, bot and messages of the recorded app_mention fixtures.
TEAM = "T061EG9R6"
CHANNEL = "C0LAN2Q65"
BOT_USER = "U0LAN0Z89"
BOT_ID = "B0LAN0Z89"
PARENT_TS = "1515449483.000108"
PARENT_AUTHOR = "W021FGA1Z"
REPLY_TS = "1515449522.000016"
REPLY_AUTHOR = "U061F7AUR"


def trigger_context(fixture: str) -> dict[str, Any]:
    """The job's trigger context, as the Slack route records it for the fixture."""
    body = (FIXTURES / f"{fixture}.json").read_bytes()
    outcome = route_event(ROUTES, parse_event({}, body), POLICY)
    assert isinstance(outcome, Trigger)
    return dump_trigger(outcome.subject)


@pytest.fixture
def workspace(resolver_db: Settings, slack_api: SlackAPI) -> SlackAPI:
    """The fixtures' workspace on the stand-in, with its bot token stored."""
    slack_api.add_bot(BOT_TOKEN, user_id=BOT_USER, bot_id=BOT_ID)
    slack_api.add_channel(CHANNEL)
    text = f"You can count on <@{BOT_USER}> for an honorable mention."
    slack_api.add_message(CHANNEL, PARENT_AUTHOR, text, ts=PARENT_TS)
    reply = f"<@{BOT_USER}> is it everything a river should be?"
    slack_api.add_message(CHANNEL, REPLY_AUTHOR, reply, thread_ts=PARENT_TS, ts=REPLY_TS)
    store_bot_token(TEAM, BOT_TOKEN)
    return slack_api


def test_slack_is_installed_as_a_conversation_without_a_forge() -> None:
    found = provider("slack")
    imported = "<integrations.slack.provider:conversation_for, imported on first call>"
    assert repr(found.conversation) == imported
    assert found.forge is None and not found.is_forge and found.route_scope is not None


@pytest.mark.parametrize(
    ("fixture", "answered_in"),
    [("app_mention__in_channel", PARENT_TS), ("app_mention__in_thread", PARENT_TS)],
    ids=["mention-starts-the-thread", "mention-inside-a-thread"],
)
def test_replies_go_in_the_thread_of_the_mention(
    workspace: SlackAPI, fixture: str, answered_in: str
) -> None:
    chat = conversation("slack", read_trigger(trigger_context(fixture)), None, get_settings())

    ref = chat.post("**Queued** · [details](https://resolver.test/jobs/1)")

    assert ref == {"channel": CHANNEL, "ts": ref["ts"]}
    posted = workspace.channels[CHANNEL].messages[ref["ts"]]
    assert (posted.thread_ts, posted.user) == (answered_in, BOT_USER)
    assert posted.text == "*Queued* · <https://resolver.test/jobs/1|details>"
    assert workspace.calls("chat.postMessage")[0].params["thread_ts"] == answered_in


def test_the_status_message_is_edited_in_place(workspace: SlackAPI) -> None:
    chat = conversation(
        "slack", read_trigger(trigger_context("app_mention__in_thread")), None, get_settings()
    )
    ref = chat.post("Queued")

    chat.edit(ref, "Working: `make test` & friends")
    chat.edit(ref, "**Done** in 2m")

    mine = [m for m in workspace.thread(CHANNEL, PARENT_TS) if m.user == BOT_USER]
    assert [(m.ts, m.text) for m in mine] == [(ref["ts"], "*Done* in 2m")]


def test_acknowledge_puts_eyes_on_the_mention_once(workspace: SlackAPI) -> None:
    chat = conversation(
        "slack", read_trigger(trigger_context("app_mention__in_thread")), None, get_settings()
    )

    chat.acknowledge()
    chat.acknowledge()  # a retried task

    messages = workspace.channels[CHANNEL].messages
    assert messages[REPLY_TS].reactions == {"eyes": [BOT_USER]}
    assert messages[PARENT_TS].reactions == {}


def test_history_is_the_thread_without_the_bots_own_messages(workspace: SlackAPI) -> None:
    chat = conversation(
        "slack", read_trigger(trigger_context("app_mention__in_thread")), None, get_settings()
    )
    chat.post("Queued")  # the bot's status message (bot_id)
    workspace.add_message(CHANNEL, BOT_USER, "an old reply", thread_ts=PARENT_TS)  # user only
    workspace.add_message(
        CHANNEL, "U0ALERTS", "deploy failed: exit 2", thread_ts=PARENT_TS, bot_id="B0ALERTS"
    )
    workspace.add_message(CHANNEL, PARENT_AUTHOR, "same here <b>", thread_ts=PARENT_TS)

    history = chat.history()

    assert history.comments == (
        Comment(PARENT_AUTHOR, f"You can count on <@{BOT_USER}> for an honorable mention."),
        Comment(REPLY_AUTHOR, f"<@{BOT_USER}> is it everything a river should be?"),
        Comment("U0ALERTS", "deploy failed: exit 2"),
        Comment(PARENT_AUTHOR, "same here <b>"),
    )
    assert history.review_threads == ()


def test_history_as_a_person_leaves_out_only_that_persons_messages() -> None:
    messages = [
        {"ts": "1.1", "user": "U0ME", "text": "status"},
        {"ts": "1.2", "user": "U0ALICE", "text": "why?"},
        {"ts": "1.3", "bot_id": "B0CI", "text": "build red"},
        {"ts": "1.4", "user": "U0ALICE", "text": ""},
    ]
    assert build_history(messages, BotIdentity("U0ME", None)) == (
        Comment("U0ALICE", "why?"),
        Comment("B0CI", "build red"),
    )


def test_history_of_a_long_thread_keeps_its_start_and_latest_replies(workspace: SlackAPI) -> None:
    for n in range(120):
        workspace.add_message(CHANNEL, REPLY_AUTHOR, f"reply {n}", thread_ts=PARENT_TS)
    chat = conversation(
        "slack", read_trigger(trigger_context("app_mention__in_channel")), None, get_settings()
    )

    comments = chat.history().comments

    assert len(comments) == HISTORY_LIMIT
    assert comments[0].author == PARENT_AUTHOR
    assert [c.body for c in comments[-2:]] == ["reply 118", "reply 119"]


def test_without_a_stored_token_the_admin_is_told_how_to_store_one(
    resolver_db: Settings, slack_api: SlackAPI
) -> None:
    store_bot_token("T0OTHER", BOT_TOKEN)  # another workspace's token is no use here
    with pytest.raises(PermanentCallbackError) as failed:
        conversation(
            "slack", read_trigger(trigger_context("app_mention__in_channel")), None, get_settings()
        )
    command = 'printf %s "$TOKEN" | resolver tokens set --provider slack --installation T061EG9R6'
    assert command in str(failed.value)
    assert slack_api.requests == []


def test_slack_errors_reach_the_callback_mapped(workspace: SlackAPI) -> None:
    chat = conversation(
        "slack", read_trigger(trigger_context("app_mention__in_channel")), None, get_settings()
    )
    workspace.fail("chat.postMessage", 429, headers={"Retry-After": "4"})
    with pytest.raises(TransientCallbackError) as limited:
        chat.post("Queued")
    assert limited.value.retry_after == 4.0
    workspace.fail("chat.postMessage", "not_in_channel")
    with pytest.raises(PermanentCallbackError, match="not_in_channel"):
        chat.post("Queued")


@pytest.mark.parametrize(
    ("context", "ref"),
    [
        ({"team_id": TEAM, "thread_ts": PARENT_TS}, None),
        (None, {"message_id": 3}),
    ],
    ids=["context-without-channel", "foreign-reference"],
)
def test_malformed_contexts_and_references_are_permanent(
    workspace: SlackAPI, context: dict[str, Any] | None, ref: dict[str, Any] | None
) -> None:
    with pytest.raises(PermanentCallbackError):
        chat = conversation(
            "slack",
            read_trigger(context or trigger_context("app_mention__in_channel")),
            None,
            get_settings(),
        )
        chat.edit(ref or {}, "Done")
    assert workspace.calls("chat.update") == []
