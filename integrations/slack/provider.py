"""Slack's outbound side: replies in the thread of the mention, as the workspace's bot.

Registered as provider `slack` when imported. The bot token is the one an admin stored for the
workspace (`resolver tokens set --provider slack --installation <team_id>`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from integrations.slack.client import BotIdentity, Message, SlackClient
from integrations.slack.mrkdwn import to_mrkdwn
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.inbound import VendorModel
from resolver.contract.outbound import TAG, Comment, History
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token

# The whole thread is the agent's context, but a long one only by its start and latest replies.
HISTORY_LIMIT: Final = 50
SEEN_REACTION: Final = "eyes"
# A tagged message carries its tag in Slack's message metadata, which people never see.
# https://api.slack.com/metadata/using
TAG_EVENT: Final = "resolver_message"
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class SlackThread:
    """Where a trigger came from: the workspace, the channel, the thread and the message."""

    team_id: str
    channel: str
    thread_ts: str
    ts: str | None


class SlackPart(VendorModel):
    """The message that asked: its channel, its thread and its own ts."""

    channel: str | None = None
    channel_type: str | None = None
    thread_ts: str | None = None
    ts: str | None = None


class SlackReach(VendorModel):
    team_id: str | None = None


def parse_thread(trigger: TaskTrigger) -> SlackThread:
    """The thread of a Slack trigger (as `integrations.slack.routes` records it)."""
    part = SlackPart.model_validate(trigger.part)
    team_id = SlackReach.model_validate(trigger.reach).team_id
    thread_ts = part.thread_ts or part.ts
    if team_id is None or part.channel is None or thread_ts is None:
        raise PermanentCallbackError("the Slack trigger names no workspace, channel or thread")
    return SlackThread(team_id, part.channel, thread_ts, part.ts)


def parse_ref(ref: Mapping[str, Any]) -> tuple[str, str]:
    """The channel and ts of a message reference that `post` returned."""
    channel, ts = ref.get("channel"), ref.get("ts")
    if not (isinstance(channel, str) and isinstance(ts, str)):
        raise PermanentCallbackError(f"not a Slack message reference: {sorted(ref)}")
    return channel, ts


def build_history(messages: list[Message], bot: BotIdentity) -> tuple[Comment, ...]:
    """Each message with text as a comment, except the bot's own: statuses, notices, replies.

    Other apps' messages stay: an alert that a person answers with a mention is context.
    """
    return tuple(
        Comment(author=str(m.get("user") or m.get("bot_id") or "unknown"), body=str(m["text"]))
        for m in messages
        if m.get("text") and not _is_own(m, bot)
    )


def _is_own(message: Message, bot: BotIdentity) -> bool:
    by_bot = bot.bot_id is not None and message.get("bot_id") == bot.bot_id
    return by_bot or message.get("user") == bot.user_id


def tag_metadata(tag: str) -> dict[str, Any]:
    """The message metadata that carries `tag` (`status-12`)."""
    if TAG.fullmatch(tag) is None:
        raise ValueError(f"not a message tag: {tag!r}")
    return {"event_type": TAG_EVENT, "event_payload": {"tag": tag}}


def is_tagged(message: Message, metadata: Mapping[str, Any], bot: BotIdentity) -> bool:
    """Whether the bot posted `message` with exactly this metadata (`tag_metadata`)."""
    return _is_own(message, bot) and message.get("metadata") == metadata


def slack_ts(moment: datetime) -> str:
    """A timezone-aware time as a Slack timestamp (`seconds.micros`), exact to the microsecond:
    a float could round it up past a message posted in that microsecond."""
    seconds, micros = divmod((moment - EPOCH) // timedelta(microseconds=1), 1_000_000)
    return f"{seconds}.{micros:06d}"


def bot_token(team_id: str, settings: Settings) -> str:
    """The workspace's stored bot token (SlackClient registers it for log masking); without
    one, the admin is told how to store it."""
    token = stored_token("slack", installation=team_id, settings=settings)
    if token is None:
        raise PermanentCallbackError(
            f"no Slack bot token for workspace {team_id}: an admin can store one with "
            f'`printf %s "$TOKEN" | resolver tokens set --provider slack '
            f"--installation {team_id} --kind bot`"
        )
    return token


class SlackConversation:
    """A Slack thread: replies go in it, the mention gets 👀, the thread is the history."""

    def __init__(self, client: SlackClient, thread: SlackThread) -> None:
        self._client = client
        self._thread = thread

    def __repr__(self) -> str:
        return f"SlackConversation({self._thread!r})"

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        thread = self._thread
        metadata = None if tag is None else tag_metadata(tag)
        ts = self._client.post(thread.channel, thread.thread_ts, to_mrkdwn(text), metadata)
        return self._ref(ts)

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        thread = self._thread
        wanted = tag_metadata(tag)
        messages = self._client.replies_since(thread.channel, thread.thread_ts, slack_ts(since))
        bot = self._client.identity()
        found = next((m for m in messages if is_tagged(m, wanted, bot)), None)
        return None if found is None else self._ref(str(found["ts"]))

    def _ref(self, ts: str) -> dict[str, Any]:
        """The reference of a message the bot posted in this thread (what `edit` takes)."""
        return {"channel": self._thread.channel, "ts": ts}

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        channel, ts = parse_ref(ref)
        self._client.update(channel, ts, to_mrkdwn(text))

    def acknowledge(self) -> None:
        if self._thread.ts is not None:
            self._client.add_reaction(self._thread.channel, self._thread.ts, SEEN_REACTION)

    def history(self) -> History:
        thread = self._thread
        messages = self._client.thread(thread.channel, thread.thread_ts, HISTORY_LIMIT)
        return History(comments=build_history(messages, self._client.identity()))


def conversation_for(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> SlackConversation:
    """The thread a trigger came from, acting with its workspace's bot token."""
    thread = parse_thread(trigger)
    return SlackConversation(SlackClient(settings, bot_token(thread.team_id, settings)), thread)


def post_private(trigger: TaskTrigger, external_id: str, text: str, settings: Settings) -> None:
    """An ephemeral message in the trigger's thread, which only the sender (`TEAM:USER`) sees."""
    thread = parse_thread(trigger)
    user = external_id.rpartition(":")[2]
    client = SlackClient(settings, bot_token(thread.team_id, settings))
    client.post_ephemeral(thread.channel, user, thread.thread_ts, to_mrkdwn(text))
