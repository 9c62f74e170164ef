"""Linear's webhooks on the Linear stand-in: the `webhooks` query and the `webhookCreate` and
`webhookUpdate` mutations, for workspace admins (`api.admins`); and `deliver`, which sends a
recorded event to a webhook's URL signed as Linear signs it (`Linear-Signature`, the hex
HMAC-SHA256 of the body, with a fresh `webhookTimestamp`).

Without a `secret` in the input, Linear makes one; `Webhook.secret` answers it.
https://linear.app/developers/webhooks
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from integrations.linear.standin.graphql import GraphQLError

if TYPE_CHECKING:
    from integrations.linear.standin.workspace import Actor, LinearWorkspace

FIXTURES = Path(__file__).parents[1] / "fixtures"
RESOURCE_TYPES = frozenset({"Comment", "Issue", "IssueLabel", "Project", "Reaction", "Cycle"})


@dataclass
class Webhook:
    id: str
    url: str
    label: str | None
    secret: str
    resource_types: list[str]
    team_id: str | None
    all_public_teams: bool
    enabled: bool = True

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": self.url,
            "label": self.label,
            "secret": self.secret,
            "enabled": self.enabled,
            "allPublicTeams": self.all_public_teams,
            "resourceTypes": self.resource_types,
            "createdAt": "2026-01-05T09:00:00.000Z",
        }


def deliver(
    webhook: Webhook, fixture: str = "Comment.create__on_issue.json", *, secret: str | None = None
) -> int:
    """Send a recorded event, re-stamped now, signed with the webhook's secret (or `secret`)."""
    payload = json.loads((FIXTURES / fixture).read_text())
    payload |= {"webhookTimestamp": int(time.time() * 1000), "webhookId": webhook.id}
    body = json.dumps(payload).encode()
    signature = hmac.new((secret or webhook.secret).encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "Linear-Delivery": str(uuid.uuid4()),
        "Linear-Event": str(payload.get("type")),
        "Linear-Signature": signature,
    }
    return httpx.post(webhook.url, content=body, headers=headers, trust_env=False).status_code


def _admin(api: LinearWorkspace, actor: Actor) -> None:
    if actor.id not in api.admins:
        raise GraphQLError("Invalid scope: `admin` required", "FORBIDDEN")


def _checked(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise GraphQLError("Argument Validation Error", "INVALID_INPUT")
    types = value.get("resourceTypes")
    if "resourceTypes" in value and (
        not isinstance(types, list) or not types or not set(types) <= RESOURCE_TYPES
    ):
        raise GraphQLError("Argument Validation Error: resourceTypes", "INVALID_INPUT")
    if "url" in value and not str(value["url"]).startswith(("http://", "https://")):
        raise GraphQLError("Argument Validation Error: url must be a URL", "INVALID_INPUT")
    return value


def webhooks(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    _admin(api, actor)
    return {"nodes": [w.as_json() for w in api.webhooks.values()]}


def webhook_create(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    _admin(api, actor)
    given = _checked(arguments.get("input"))
    if not given.get("url") or "resourceTypes" not in given:
        raise GraphQLError("Argument Validation Error: url, resourceTypes", "INVALID_INPUT")
    team, everyone = given.get("teamId"), bool(given.get("allPublicTeams"))
    if bool(team) == everyone:
        raise GraphQLError("Either teamId or allPublicTeams must be given", "INVALID_INPUT")
    webhook = Webhook(
        id=str(uuid.uuid4()),
        url=str(given["url"]),
        label=given.get("label"),
        secret=given.get("secret") or "lin_wh_" + secrets.token_hex(16),
        resource_types=list(given["resourceTypes"]),
        team_id=team,
        all_public_teams=everyone,
        enabled=given.get("enabled", True) is not False,
    )
    api.webhooks[webhook.id] = webhook
    return {"success": True, "lastSyncId": 1.0, "webhook": webhook.as_json()}


def webhook_update(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    _admin(api, actor)
    webhook = api.webhooks.get(str(arguments.get("id")))
    if webhook is None:
        raise GraphQLError("Entity not found: Webhook", "INVALID_INPUT")
    given = _checked(arguments.get("input"))
    webhook.url = str(given.get("url") or webhook.url)
    webhook.label = given.get("label", webhook.label)
    webhook.secret = given.get("secret") or webhook.secret
    webhook.resource_types = list(given.get("resourceTypes") or webhook.resource_types)
    webhook.enabled = given.get("enabled", webhook.enabled) is not False
    return {"success": True, "lastSyncId": 2.0, "webhook": webhook.as_json()}


WEBHOOK_RESOLVERS = {
    "webhooks": webhooks,
    "webhookCreate": webhook_create,
    "webhookUpdate": webhook_update,
}
