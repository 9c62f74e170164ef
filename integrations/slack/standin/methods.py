"""The Slack stand-in's methods, one handler each, and the JSON shapes they answer with.
https://api.slack.com/methods"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from integrations.slack.standin.state import (
    TEAM_ID,
    Answer,
    Call,
    Channel,
    Ephemeral,
    Message,
    error,
    ok,
)

if TYPE_CHECKING:
    from integrations.slack.standin.api import SlackAPI

TEXT_LIMIT = 40_000
_TS = re.compile(r"^\d+\.\d+$")
_EMOJI = re.compile(r"^[a-z0-9_+-]+$")

Method = Callable[["SlackAPI", Call], Answer]


def _message_json(
    channel: Channel, message: Message, *, all_metadata: bool = True
) -> dict[str, Any]:
    """The message as Slack shows it; without `all_metadata`, its metadata's event type only."""
    data: dict[str, Any] = {
        "type": "message",
        "ts": message.ts,
        "text": message.text,
        "user": message.user,
        "team": TEAM_ID,
    }
    if message.bot_id:
        data |= {"bot_id": message.bot_id, "app_id": "A0RESOLVER"}
    if message.thread_ts:
        data["thread_ts"] = message.thread_ts
        parent = channel.messages.get(message.thread_ts)
        if parent is not None and parent.ts != message.ts:
            data["parent_user_id"] = parent.user
    replies = [m for m in channel.messages.values() if m.thread_ts == message.ts != m.ts]
    if replies:
        data |= {"thread_ts": message.ts, "reply_count": len(replies)}
    if message.edited_ts:
        data["edited"] = {"user": message.user, "ts": message.edited_ts}
    if message.reactions:
        data["reactions"] = [
            {"name": name, "users": users, "count": len(users)}
            for name, users in message.reactions.items()
        ]
    if message.metadata:
        metadata = message.metadata
        data["metadata"] = metadata if all_metadata else {"event_type": metadata["event_type"]}
    return data


def _text(call: Call) -> str | Answer:
    text = call.params.get("text")
    if not isinstance(text, str) or not text.strip():
        return error("no_text")
    if len(text) > TEXT_LIMIT:
        return error("msg_too_long")
    return text


def _metadata(raw: object) -> dict[str, Any] | Answer:
    """The `metadata` argument: a JSON object (a string in a form body) with an `event_type`
    and an `event_payload` object; `{}` for none. Slack enforces no naming pattern.
    https://docs.slack.dev/reference/methods/chat.postMessage (errors),
    https://api.slack.com/reference/metadata"""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return error("invalid_metadata_format")
    if not isinstance(raw, dict):
        return error("invalid_metadata_format")
    if not raw:
        return {}
    event_type, payload = raw.get("event_type"), raw.get("event_payload")
    if not (isinstance(event_type, str) and event_type and isinstance(payload, dict)):
        return error("invalid_metadata_schema")
    return {"event_type": event_type, "event_payload": payload}


def _flag(value: object) -> bool:
    """A boolean argument: `true` or `1` (slack_sdk sends `1`)."""
    return value is True or str(value).lower() in {"1", "true"}


def auth_test(api: SlackAPI, call: Call) -> Answer:
    me = call.caller
    fields = {"bot_id": me.bot_id} if me.bot_id else {}
    return ok(
        url="https://resolver-test.slack.com/",
        team="Resolver Test",
        user=me.name,
        team_id=me.team_id,
        user_id=me.user_id,
        is_enterprise_install=False,
        **fields,
    )


def post_message(api: SlackAPI, call: Call) -> Answer:
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    if channel.archived:
        return error("is_archived")
    text = _text(call)
    if not isinstance(text, str):
        return text
    metadata = _metadata(call.params.get("metadata", {}))
    if isinstance(metadata, tuple):
        return metadata
    thread_ts = call.params.get("thread_ts")
    if thread_ts is not None and not _TS.match(str(thread_ts)):
        return error("invalid_thread_ts")
    parent = channel.messages.get(str(thread_ts)) if thread_ts else None
    # A reply to a reply joins the parent's thread.
    root = (parent.thread_ts or parent.ts) if parent else thread_ts
    me = call.caller
    message = Message(
        api.new_ts(), text, me.user_id, bot_id=me.bot_id, thread_ts=root, metadata=metadata or None
    )
    channel.messages[message.ts] = message
    return ok(channel=channel.id, ts=message.ts, message=_message_json(channel, message))


def post_ephemeral(api: SlackAPI, call: Call) -> Answer:
    """Shown to `user` alone, in the channel or a thread of it; nothing else ever reads it.
    https://api.slack.com/methods/chat.postEphemeral"""
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    if channel.archived:
        return error("is_archived")
    user = str(call.params.get("user") or "")
    if not user:
        return error("user_not_found")
    if channel.members is not None and user not in channel.members:
        return error("user_not_in_channel")
    text = _text(call)
    if not isinstance(text, str):
        return text
    thread_ts = call.params.get("thread_ts")
    if thread_ts is not None and not _TS.match(str(thread_ts)):
        return error("invalid_thread_ts")
    me = call.caller
    message = Message(api.new_ts(), text, me.user_id, bot_id=me.bot_id, thread_ts=thread_ts)
    channel.ephemeral.append(Ephemeral(user, message))
    return ok(message_ts=message.ts)


def update_message(api: SlackAPI, call: Call) -> Answer:
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    message = channel.messages.get(str(call.params.get("ts") or ""))
    if message is None:
        return error("message_not_found")
    if message.user != call.caller.user_id:
        return error("cant_update_message")
    text = _text(call)
    if not isinstance(text, str):
        return text
    # Without `metadata` the message keeps its own; `{}` removes it.
    # https://docs.slack.dev/reference/methods/chat.update
    metadata = _metadata(call.params["metadata"]) if "metadata" in call.params else None
    if isinstance(metadata, tuple):
        return metadata
    if metadata is not None:
        message.metadata = metadata or None
    message.text, message.edited_ts = text, api.new_ts()
    data = _message_json(channel, message)
    return ok(channel=channel.id, ts=message.ts, text=text, message=data)


def add_reaction(api: SlackAPI, call: Call) -> Answer:
    if not call.params.get("channel") or not call.params.get("timestamp"):
        return error("no_item_specified")
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    message = channel.messages.get(str(call.params["timestamp"]))
    if message is None:
        return error("message_not_found")
    name = str(call.params.get("name") or "")
    if not _EMOJI.match(name):
        return error("invalid_name")
    users = message.reactions.setdefault(name, [])
    if call.caller.user_id in users:
        return error("already_reacted")
    users.append(call.caller.user_id)
    return ok()


def replies(api: SlackAPI, call: Call) -> Answer:
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    parent = channel.messages.get(str(call.params.get("ts") or ""))
    if parent is None:
        return error("thread_not_found")
    thread = api.thread(channel.id, parent.thread_ts or parent.ts)
    after = _after_oldest(call)
    if after is None:
        return error("invalid_ts_oldest")
    window = [m for m in thread if after(m)]
    start = _cursor_start(call.params.get("cursor"), window)
    if start is None:
        return error("invalid_cursor")
    limit = max(1, min(int(call.params.get("limit") or 1000), 1000))
    page = window[start : start + limit]
    if start > 0 and api.parent_on_every_page and window[:1] == thread[:1]:
        page = [thread[0], *page]
    # Without include_all_metadata, a message's metadata is its event type only.
    # https://api.slack.com/metadata/using#direct
    all_metadata = _flag(call.params.get("include_all_metadata"))
    answer: dict[str, Any] = {
        "messages": [_message_json(channel, m, all_metadata=all_metadata) for m in page],
        "has_more": start + limit < len(window),
    }
    if answer["has_more"]:
        next_ts = window[start + limit].ts
        cursor = base64.b64encode(f"next_ts:{next_ts}".encode()).decode()
        answer["response_metadata"] = {"next_cursor": cursor}
    return ok(**answer)


def _after_oldest(call: Call) -> Callable[[Message], bool] | None:
    """Whether a message is after `oldest` (a ts; at it too with `inclusive`); None when
    `oldest` is no timestamp."""
    try:
        oldest = Decimal(str(call.params.get("oldest") or 0))
    except InvalidOperation:
        return None
    if _flag(call.params.get("inclusive")):
        return lambda m: Decimal(m.ts) >= oldest
    return lambda m: Decimal(m.ts) > oldest


def _cursor_start(cursor: object, thread: list[Message]) -> int | None:
    if not cursor:
        return 0
    try:
        next_ts = base64.b64decode(str(cursor)).decode().removeprefix("next_ts:")
    except ValueError:
        return None
    positions = [i for i, m in enumerate(thread) if m.ts == next_ts]
    return positions[0] if positions else None


METHODS: dict[str, Method] = {
    "auth.test": auth_test,
    "chat.postMessage": post_message,
    "chat.postEphemeral": post_ephemeral,
    "chat.update": update_message,
    "reactions.add": add_reaction,
    "conversations.replies": replies,
}
