"""Linear data-change webhook payloads: the fields we read."""

from __future__ import annotations

from typing import Any

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


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key `<type>.<action>` (`Comment.create`). Delivery: `Linear-Delivery`; without it, the
    hash of type, action, data id and `updatedAt`: a retry is re-signed with a new timestamp,
    so the body itself differs between attempts."""
    payload = decode_object(body)
    kind, action = text_field(payload.get("type")), text_field(payload.get("action"))
    if not kind or not action:
        raise MalformedError("no type or action")
    raw = payload.get("data")
    data = raw if isinstance(raw, dict) else {}
    delivery = headers.get("linear-delivery") or content_key(
        kind, action, data.get("id"), data.get("updatedAt")
    )
    return WebhookEvent(f"{kind}.{action}", delivery, payload)


class Actor(VendorModel):
    id: str | None = None
    name: str | None = None
    type: str | None = None  # "user" for people; apps and integrations have other types


class Label(VendorModel):
    id: str
    name: str


class Team(VendorModel):
    id: str
    key: str | None = None


class IssueData(VendorModel):
    id: str
    identifier: str | None = None
    title: str = ""
    description: str | None = None
    url: str | None = None
    teamId: str | None = None
    team: Team | None = None
    labels: list[Label] | None = None
    updatedAt: str | None = None


class IssueRef(VendorModel):
    id: str
    identifier: str | None = None
    title: str = ""
    url: str | None = None
    teamId: str | None = None
    team: Team | None = None


class CommentUser(VendorModel):
    id: str
    name: str | None = None


class CommentData(VendorModel):
    id: str
    body: str | None = None
    issueId: str | None = None
    issue: IssueRef | None = None
    parentId: str | None = None
    userId: str | None = None
    user: CommentUser | None = None
    botActor: dict[str, Any] | None = None
    url: str | None = None


class Envelope(VendorModel):
    action: str
    actor: Actor | None = None
    url: str | None = None
    organizationId: str | None = None

    def actor_sender(self, fallback_id: str | None, bot: bool) -> Sender | None:
        actor = self.actor
        external_id = (actor.id if actor else None) or fallback_id
        if not external_id:
            return None
        is_bot = bot or (actor is not None and actor.type not in (None, "user"))
        return Sender(external_id, login=None, is_bot=is_bot)


class CommentEvent(Envelope):
    data: CommentData


class IssueEvent(Envelope):
    data: IssueData
    updatedFrom: dict[str, Any] | None = None
