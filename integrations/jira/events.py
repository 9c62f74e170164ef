"""Jira Cloud and Data Center webhook payloads: the fields we read."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field

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
    """Key: the body's `webhookEvent`. Delivery: `X-Atlassian-Webhook-Identifier`, which is
    unchanged across Jira's retries; without it (Data Center), the body's hash."""
    payload = decode_object(body)
    key = text_field(payload.get("webhookEvent"))
    if not key:
        raise MalformedError("no webhookEvent")
    delivery = headers.get("x-atlassian-webhook-identifier")
    return WebhookEvent(key, delivery or content_key(hashlib.sha256(body).hexdigest()), payload)


class User(VendorModel):
    accountId: str | None = None
    key: str | None = None  # Data Center
    name: str | None = None  # Data Center username: unique, unlike displayName
    displayName: str | None = None
    accountType: str | None = None  # atlassian | app | customer

    def as_sender(self) -> Sender | None:
        external_id = self.accountId or self.key or self.name
        if not external_id:
            return None
        return Sender(external_id, login=self.name, is_bot=self.accountType == "app")


class Project(VendorModel):
    key: str | None = None


class Fields(VendorModel):
    summary: str | None = None
    description: str | dict[str, Any] | None = None
    labels: list[str] | None = None
    project: Project | None = None


class Issue(VendorModel):
    id: str | int | None = None
    key: str
    self_url: str | None = Field(default=None, alias="self")
    fields: Fields | None = None

    def site(self) -> str | None:
        """The Jira site's base URL, from the issue's REST link: what precedes `/rest/`, so that
        a Data Center site served under a context path (`https://host/jira`) keeps it."""
        try:
            parts = urlsplit(self.self_url or "")
        except ValueError:  # not a URL (an unclosed `[`): no site
            return None
        if not (parts.scheme and parts.netloc):
            return None
        context_path, rest, _ = parts.path.partition("/rest/")
        return f"{parts.scheme}://{parts.netloc}{context_path.rstrip('/') if rest else ''}"


class Comment(VendorModel):
    id: str | int
    body: str | dict[str, Any] | None = None
    author: User | None = None


class ChangeItem(VendorModel):
    field: str | None = None
    fieldId: str | None = None
    fromString: str | None = None
    toString: str | None = None


class Changelog(VendorModel):
    items: list[ChangeItem] | None = None


class CommentEvent(VendorModel):
    issue: Issue
    comment: Comment
    user: User | None = None


class IssueEvent(VendorModel):
    issue: Issue
    user: User | None = None
    changelog: Changelog | None = None
