"""Jira's admin webhooks on the Jira stand-in: `/rest/webhooks/1.0/webhook` (register, list,
read, update, delete), for users with the Administer Jira permission; and `deliver`, which sends
an event to a webhook's URL signed with its secret as Jira does (`X-Hub-Signature: sha256=…`).

    api = JiraWebhooksAPI()
    admin = api.add_user("Ada"); api.add_api_token("ada@example.com", "ATATT…", admin)
    api.admins.add(admin.account_id)
    api.webhooks                                   # what was registered, secrets included
    api.deliver(webhook, "comment_created__wiki_markup.json")   # → our answer's status

https://developer.atlassian.com/cloud/jira/platform/webhooks/
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from integrations.jira.standin.api import JiraAPI
from integrations.jira.standin.state import User, error_body
from integrations.standin.server import Reply, Routed, Routes

PATH = "/rest/webhooks/1.0/webhook"
FIXTURES = Path(__file__).parents[1] / "fixtures"


@dataclass
class Webhook:
    id: int
    name: str
    url: str
    events: list[str]
    secret: str | None = None
    filters: dict[str, str] = field(default_factory=dict)
    exclude_body: bool = False

    def as_json(self, site: str) -> dict[str, Any]:
        """As Jira lists it: the secret is never shown."""
        return {
            "self": f"{site}{PATH}/{self.id}",
            "name": self.name,
            "url": self.url,
            "events": self.events,
            "filters": self.filters,
            "excludeBody": self.exclude_body,
            "enabled": True,
            "lastUpdatedUser": "admin",
        }


Handler = Callable[["JiraWebhooksAPI", Routed, User], Reply]


class JiraWebhooksAPI(JiraAPI):
    """The Jira stand-in with its admin webhooks."""

    def __init__(self) -> None:
        self.webhooks: dict[int, Webhook] = {}
        self.admins: set[str] = set()  # account ids with Administer Jira
        self._hook_ids = itertools.count(1)
        super().__init__()
        self.routes = Routes([*WEBHOOK_ROUTES, *self.routes.keys])

    def serve(self, call: Routed) -> Reply:
        handler = WEBHOOK_ROUTES.get(call.route)
        if handler is None:
            return super().serve(call)
        user = self._authenticate(call.headers.get("authorization", ""))
        if user is None:
            return 401, error_body("You are not authenticated."), {}
        if user.account_id not in self.admins:
            return 403, error_body("You do not have the permission to manage webhooks."), {}
        if call.method in ("POST", "PUT") and not isinstance(call.body, dict):
            return 400, error_body("Unexpected character in the request body"), {}
        return handler(self, call, user)

    def deliver(self, webhook: Webhook, fixture: str, *, secret: str | None = None) -> int:
        """Send a recorded event to the webhook's URL, signed with its secret (or `secret`)."""
        body = (FIXTURES / fixture).read_bytes()
        key = (secret or webhook.secret or "").encode()
        signature = hmac.new(key, body, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "X-Atlassian-Webhook-Identifier": str(uuid.uuid4()),
            "X-Atlassian-Webhook-Flow": "Primary",
            "X-Hub-Signature": f"sha256={signature}",
        }
        answer = httpx.post(webhook.url, content=body, headers=headers, trust_env=False)
        return answer.status_code


def _apply(webhook: Webhook, body: dict[str, Any]) -> None:
    webhook.name = str(body.get("name") or webhook.name)
    webhook.url = str(body["url"])
    webhook.events = [str(e) for e in body.get("events") or []]
    webhook.filters = dict(body.get("filters") or {})
    webhook.exclude_body = bool(body.get("excludeBody"))
    if "secret" in body:
        webhook.secret = body["secret"] or None


def _find(api: JiraWebhooksAPI, call: Routed) -> Webhook | None:
    key = call.params["id"]
    return api.webhooks.get(int(key)) if key.isdigit() else None


def list_webhooks(api: JiraWebhooksAPI, call: Routed, user: User) -> Reply:
    return 200, [w.as_json(api.site) for w in api.webhooks.values()], {}


def register(api: JiraWebhooksAPI, call: Routed, user: User) -> Reply:
    if not call.body.get("url") or not call.body.get("name"):
        return 400, error_body("The name and the URL are required."), {}
    webhook = Webhook(next(api._hook_ids), "", "", [])
    _apply(webhook, call.body)
    api.webhooks[webhook.id] = webhook
    return 201, webhook.as_json(api.site), {}


def read(api: JiraWebhooksAPI, call: Routed, user: User) -> Reply:
    webhook = _find(api, call)
    if webhook is None:
        return 404, error_body("Webhook not found."), {}
    return 200, webhook.as_json(api.site), {}


def update(api: JiraWebhooksAPI, call: Routed, user: User) -> Reply:
    webhook = _find(api, call)
    if webhook is None:
        return 404, error_body("Webhook not found."), {}
    if not call.body.get("url"):
        return 400, error_body("The URL is required."), {}
    _apply(webhook, call.body)
    return 200, webhook.as_json(api.site), {}


def delete(api: JiraWebhooksAPI, call: Routed, user: User) -> Reply:
    webhook = _find(api, call)
    if webhook is None:
        return 404, error_body("Webhook not found."), {}
    del api.webhooks[webhook.id]
    return 204, None, {}


WEBHOOK_ROUTES: dict[str, Handler] = {
    f"GET {PATH}": list_webhooks,
    f"POST {PATH}": register,
    f"GET {PATH}/{{id}}": read,
    f"PUT {PATH}/{{id}}": update,
    f"DELETE {PATH}/{{id}}": delete,
}
