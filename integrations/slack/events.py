"""Slack Events API payloads, and reading the bot's mention out of message text."""

from __future__ import annotations

import hashlib
import re

from resolver.contract.inbound import (
    Headers,
    MalformedError,
    Sender,
    VendorModel,
    WebhookEvent,
    content_key,
    decode_object,
    text_field,
)

_USER_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key: the inner event's type, with its subtype (`message.message_changed`), or the
    envelope type (`url_verification`). Delivery: the envelope's `event_id`."""
    payload = decode_object(body)
    kind = text_field(payload.get("type"))
    if kind != "event_callback":
        if not kind:
            raise MalformedError("no envelope type")
        return WebhookEvent(kind, content_key(kind, hashlib.sha256(body).hexdigest()), payload)
    inner = payload.get("event")
    event_type = text_field(inner.get("type")) if isinstance(inner, dict) else None
    if not isinstance(inner, dict) or not event_type:
        raise MalformedError("event_callback without an event type")
    subtype = text_field(inner.get("subtype"))
    key = f"{event_type}.{subtype}" if subtype else event_type
    delivery = text_field(payload.get("event_id"))
    return WebhookEvent(key, delivery or content_key(hashlib.sha256(body).hexdigest()), payload)


class Authorization(VendorModel):
    user_id: str | None = None
    is_bot: bool | None = None


class Message(VendorModel):
    """An `app_mention` or `message` event."""

    type: str
    subtype: str | None = None
    user: str | None = None
    bot_id: str | None = None
    username: str | None = None
    text: str | None = None
    ts: str
    thread_ts: str | None = None
    channel: str
    channel_type: str | None = None
    team: str | None = None


class EventCallback(VendorModel):
    team_id: str
    api_app_id: str | None = None
    event: Message
    event_id: str | None = None
    authorizations: list[Authorization] | None = None
    authed_users: list[str] | None = None

    def bot_user_ids(self) -> frozenset[str]:
        """The bot's own user ids, as Slack lists who the event is delivered to."""
        ids = {a.user_id for a in self.authorizations or [] if a.is_bot and a.user_id}
        return frozenset(ids | set(self.authed_users or []))

    def team(self) -> str:
        return self.event.team or self.team_id

    def sender(self) -> Sender:
        message = self.event
        who = message.user or message.bot_id or ""
        login = message.user or message.username or message.bot_id
        return Sender(f"{self.team()}:{who}", login=login, is_bot=message.bot_id is not None)


class UrlVerification(VendorModel):
    challenge: str


def plain_text(text: str | None, bot_ids: frozenset[str], bot_name: str) -> str:
    """Message text with the bot's `<@U…>` mentions written `@bot_name`, and Slack's three
    HTML escapes undone (after the swap, so typed `&lt;@U…&gt;` never becomes a mention)."""
    if not text:
        return ""

    def swap(found: re.Match[str]) -> str:
        return f"@{bot_name}" if found.group(1) in bot_ids else found.group(0)

    swapped = _USER_MENTION.sub(swap, text)
    return swapped.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def mentioned_ids(text: str | None) -> frozenset[str]:
    """Every user id mentioned in the text."""
    return frozenset(_USER_MENTION.findall(text or ""))
