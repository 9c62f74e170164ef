"""Sixth's webhook payloads: `{"type": "message.created", "workspace": …, "message": {…}}`."""

from __future__ import annotations

from collections.abc import Mapping

from resolver.contract.inbound import (
    Headers,
    MalformedError,
    VendorModel,
    WebhookEvent,
    content_key,
    decode_object,
    text_field,
)


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key: the payload's `type`. Delivery: `X-Sixth-Delivery`; without it, the message's id."""
    payload = decode_object(body)
    kind = text_field(payload.get("type"))
    if not kind:
        raise MalformedError("no event type")
    message = payload.get("message")
    message_id = message.get("id") if isinstance(message, Mapping) else None
    delivery = headers.get("x-sixth-delivery") or content_key(kind, message_id)
    return WebhookEvent(kind, delivery, payload)


class Author(VendorModel):
    id: str
    handle: str | None = None
    bot: bool = False


class Message(VendorModel):
    id: str
    channel: str
    text: str = ""
    thread: str | None = None
    """The message that started the thread; None for a message that starts one."""
    author: Author


class MessageCreated(VendorModel):
    workspace: str
    message: Message
