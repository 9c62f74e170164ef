"""The GitHub stand-in's App: its permissions and events (`GET /app`), its webhook's
configuration and its deliveries, which it really sends, signed with the webhook's current
secret, to the configured URL. https://docs.github.com/rest/apps/apps#get-the-authenticated-app
https://docs.github.com/rest/apps/webhooks

    api.app.permissions["contents"] = "read"          # an App that lacks a permission
    api.app.hook.url = f"{server}/webhooks/github"     # where its deliveries go
    api.app.hook.secret = "…"
    api.app.deliver("ping", {"zen": "…"})              # GitHub sends an event now
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from integrations.github.app_manifest import EVENTS, PERMISSIONS
from integrations.github.standin.state import Answer, Request, error_body, timestamp

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

HOOK_ID = 428_510_004
DELIVERY_TIMEOUT = 10  # GitHub gives a receiver 10 seconds


@dataclass
class Hook:
    url: str = ""
    content_type: str = "json"
    secret: str = ""
    insecure_ssl: str = "0"


@dataclass
class Delivery:
    id: int
    guid: str
    event: str
    action: str | None
    body: bytes
    redelivery: bool
    status_code: int
    status: str
    duration: float
    url: str
    delivered_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def item(self) -> dict[str, Any]:
        """GitHub's "simple webhook delivery"."""
        return {
            "id": self.id,
            "guid": self.guid,
            "delivered_at": timestamp(self.delivered_at),
            "redelivery": self.redelivery,
            "duration": self.duration,
            "status": self.status,
            "status_code": self.status_code,
            "event": self.event,
            "action": self.action,
            "installation_id": None,
            "repository_id": None,
            "throttled_at": None,
        }


@dataclass
class App:
    """The App the JWTs are for: by default exactly what the manifest asks for."""

    id: int
    slug: str = "resolver-test"
    owner: str = "octo-org"
    owner_type: str = "Organization"
    permissions: dict[str, str] = field(default_factory=lambda: dict(PERMISSIONS))
    events: list[str] = field(default_factory=lambda: list(EVENTS))
    hook: Hook = field(default_factory=Hook)
    deliveries: list[Delivery] = field(default_factory=list)
    _next_id: int = 90_000_001

    def deliver(self, event: str, payload: dict[str, Any], guid: str | None = None) -> Delivery:
        """Send `event` to the hook now, as GitHub does when it happens; returns the record."""
        body = json.dumps(payload).encode()
        guid = guid or str(uuid.uuid4())
        return self._send(event, payload.get("action"), body, guid, redelivery=False)

    def redeliver(self, delivery: Delivery) -> Delivery:
        return self._send(delivery.event, delivery.action, delivery.body, delivery.guid, True)

    def _send(
        self, event: str, action: str | None, body: bytes, guid: str, redelivery: bool
    ) -> Delivery:
        started = datetime.now(UTC)
        status_code, status = self._post(event, body, guid)
        duration = (datetime.now(UTC) - started).total_seconds()
        self._next_id += 1
        delivery = Delivery(
            self._next_id, guid, event, action, body, redelivery, status_code, status,
            round(duration, 2), self.hook.url,
        )  # fmt: skip
        self.deliveries.append(delivery)
        return delivery

    def _post(self, event: str, body: bytes, guid: str) -> tuple[int, str]:
        signature = hmac.new(self.hook.secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/4f2a9b1",
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": guid,
            "X-GitHub-Hook-ID": str(HOOK_ID),
            "X-GitHub-Hook-Installation-Target-Type": "integration",
            "X-GitHub-Hook-Installation-Target-ID": str(self.id),
        }
        if self.hook.secret:
            headers["X-Hub-Signature-256"] = f"sha256={signature}"
        request = urllib.request.Request(self.hook.url, body, headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=DELIVERY_TIMEOUT) as answer:
                return answer.status, "OK"
        except urllib.error.HTTPError as error:
            return error.code, error.reason or "Invalid HTTP Response"
        except (urllib.error.URLError, OSError, ValueError):
            return 0, "failed to connect to host"

    def json(self, web_url: str) -> dict[str, Any]:
        """GitHub's App document."""
        now = timestamp(datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
        return {
            "id": self.id,
            "slug": self.slug,
            "node_id": f"A_{self.id}",
            "client_id": f"Iv23li{self.id}",
            "owner": {"login": self.owner, "id": 9_919, "type": self.owner_type},
            "name": "Resolver (test)",
            "description": "",
            "external_url": "https://resolver.example",
            "html_url": f"{web_url}/apps/{self.slug}",
            "created_at": now,
            "updated_at": now,
            "permissions": dict(self.permissions),
            "events": list(self.events),
            "installations_count": 1,
        }


def get_app(api: GitHubAPI, request: Request) -> Answer:
    return 200, api.app.json(api.web_url)


def get_hook_config(api: GitHubAPI, request: Request) -> Answer:
    hook = api.app.hook
    config = {"content_type": hook.content_type, "insecure_ssl": hook.insecure_ssl, "url": hook.url}
    return 200, config | ({"secret": "********"} if hook.secret else {})


def list_deliveries(api: GitHubAPI, request: Request) -> Answer:
    """Newest first, `per_page` of them (GitHub pages them with a cursor, not numbers)."""
    values = request.query.get("per_page") or ["30"]
    per_page = min(max(int(values[-1]), 1), 100) if values[-1].isdigit() else 30
    return 200, [d.item() for d in reversed(api.app.deliveries)][:per_page]


def get_delivery(api: GitHubAPI, request: Request) -> Answer:
    delivery = _delivery(api, request)
    if delivery is None:
        return 404, error_body(404, "Not Found")
    return 200, delivery.item() | {"url": delivery.url}


def redeliver(api: GitHubAPI, request: Request) -> Answer:
    """GitHub accepts the attempt (202) and delivers again with the same GUID; here the
    delivery is sent before the answer, so it is listed as soon as the caller looks."""
    delivery = _delivery(api, request)
    if delivery is None:
        return 404, error_body(404, "Not Found")
    api.app.redeliver(delivery)
    return 202, {}


def _delivery(api: GitHubAPI, request: Request) -> Delivery | None:
    wanted = request.params["delivery_id"]
    return next((d for d in api.app.deliveries if str(d.id) == wanted), None)


APP_ROUTES = {
    "GET /app": get_app,
    "GET /app/hook/config": get_hook_config,
    "GET /app/hook/deliveries": list_deliveries,
    "GET /app/hook/deliveries/{delivery_id}": get_delivery,
    "POST /app/hook/deliveries/{delivery_id}/attempts": redeliver,
}
__all__ = ["APP_ROUTES", "HOOK_ID", "App", "Delivery", "Hook"]
