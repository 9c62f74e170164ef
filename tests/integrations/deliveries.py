"""A fake of each provider's sending side: real fixtures, signed the way the provider signs.

Signatures are computed here independently of the code under test (hmac, the Standard Webhooks
library), so verification is exercised for real and never switched off.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import importlib
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import standardwebhooks

import integrations
from integrations import registry

BOT = "resolver"
SECRETS = {
    "github": "gh-test-secret",
    "gitlab": "gl-test-token",
    "gitlab_signing": "whsec_" + base64.b64encode(b"gitlab-signing-key-32-bytes-long").decode(),
    "slack": "slack-test-signing-secret",
    "jira": "jira-test-secret",
    "linear": "linear-test-secret",
}
ROOT = Path(integrations.__file__).parent
INTEGRATIONS = tuple(item.integration for item in registry.installed())
PROVIDERS = registry.names()
# The account that sends each provider's recorded payloads (GitHub's Codertocat, GitLab's root…).
SENDERS = {
    "github": "21031067",
    "gitlab": "1",
    "slack": "T061EG9R6:W021FGA1Z",
    "jira": "5b10ac8d82e05b22cc7d4ef5",
    "linear": "aacdca22-6266-4c0a-ab3c-8fa70a26765c",
}
BY_NAME = {item.name: item for item in INTEGRATIONS}


def own_sending(provider: str) -> ModuleType:
    """The sending side of a provider this module does not know, from its own test folder:
    `tests/integrations/<name>/deliveries.py`, which has `ENV` (its settings, for
    `webhook_env`), `SENDER` (who sends its recorded payloads), `signed(key, payload)` (a
    `Delivery`) and `set_text(payload, text)` (a comment fixture's text replaced)."""
    return importlib.import_module(f"tests.integrations.{provider}.deliveries")


def sender(provider: str) -> str:
    """The account that sends a provider's recorded payloads."""
    return SENDERS[provider] if provider in SENDERS else str(own_sending(provider).SENDER)


def own_env() -> dict[str, str]:
    """The settings of every installed provider this module does not know."""
    env: dict[str, str] = {}
    for provider in PROVIDERS:
        if provider not in SENDERS:
            env |= own_sending(provider).ENV
    return env


@dataclass(frozen=True)
class Delivery:
    path: str
    body: bytes
    headers: dict[str, str]


def stem(key: str) -> str:
    """A vendor event key as it appears in fixture file names (`Note Hook` → `Note_Hook`)."""
    return key.replace(" ", "_").replace(":", "_")


def fixture_paths(provider: str) -> list[Path]:
    return sorted((ROOT / provider / "fixtures").glob("*.json"))


def fixture_key(provider: str, path: Path) -> str:
    """The vendor event key of a fixture, read from its name `<event>__<detail>.json`."""
    prefix = path.name.split("__", 1)[0]
    item = BY_NAME[provider]
    known = {stem(key): key for key in (*item.routes, *item.ignored)}
    return known.get(prefix, prefix)


def load(provider: str, name: str) -> dict[str, Any]:
    """A fresh, mutable copy of fixture `name` (its file name without `.json`)."""
    data: dict[str, Any] = json.loads((ROOT / provider / "fixtures" / f"{name}.json").read_text())
    return copy.deepcopy(data)


def _hex(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _encode(payload: dict[str, Any] | bytes) -> bytes:
    return payload if isinstance(payload, bytes) else json.dumps(payload).encode()


def github(
    key: str,
    payload: dict[str, Any] | bytes,
    *,
    delivery: str | None = None,
    hook_id: str = "42",
    secret: str = SECRETS["github"],
) -> Delivery:
    body = _encode(payload)
    headers = {
        "X-GitHub-Event": key.split(".", 1)[0],
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": hook_id,
        "X-Hub-Signature-256": "sha256=" + _hex(secret, body),
        "User-Agent": "GitHub-Hookshot/test",
        "Content-Type": "application/json",
    }
    return Delivery("/webhooks/github", body, headers)


def gitlab(
    key: str,
    payload: dict[str, Any] | bytes,
    *,
    signed: bool = False,
    idempotency_key: str | None = None,
    timestamp: float | None = None,
    token: str = SECRETS["gitlab"],
) -> Delivery:
    """Token mode (`X-Gitlab-Token`) by default; `signed=True` for Standard Webhooks."""
    body = _encode(payload)
    ident = idempotency_key or str(uuid.uuid4())
    headers = {"X-Gitlab-Event": key, "Idempotency-Key": ident, "Content-Type": "application/json"}
    if signed:
        when = int(time.time() if timestamp is None else timestamp)
        headers.update(standard_webhook_headers(ident, when, body))
    else:
        headers["X-Gitlab-Token"] = token
    return Delivery("/webhooks/gitlab", body, headers)


def standard_webhook_headers(
    msg_id: str, when: int, body: bytes, secret: str = SECRETS["gitlab_signing"]
) -> dict[str, str]:
    from datetime import UTC, datetime

    signer = standardwebhooks.Webhook(secret)
    signature = signer.sign(msg_id, datetime.fromtimestamp(when, tz=UTC), body.decode())
    return {"webhook-id": msg_id, "webhook-timestamp": str(when), "webhook-signature": signature}


def slack(
    payload: dict[str, Any] | bytes,
    *,
    timestamp: float | None = None,
    secret: str = SECRETS["slack"],
) -> Delivery:
    body = _encode(payload)
    when = str(int(time.time() if timestamp is None else timestamp))
    signature = "v0=" + _hex(secret, f"v0:{when}:".encode() + body)
    headers = {
        "X-Slack-Request-Timestamp": when,
        "X-Slack-Signature": signature,
        "Content-Type": "application/json",
    }
    return Delivery("/webhooks/slack", body, headers)


def jira(
    payload: dict[str, Any] | bytes, *, identifier: str | None = None, secret: str = SECRETS["jira"]
) -> Delivery:
    body = _encode(payload)
    headers = {
        "X-Hub-Signature": "sha256=" + _hex(secret, body),
        "X-Atlassian-Webhook-Identifier": identifier or str(uuid.uuid4()),
        "Content-Type": "application/json",
    }
    return Delivery("/webhooks/jira", body, headers)


def linear(
    payload: dict[str, Any] | bytes,
    *,
    delivery: str | None = None,
    sent_at: float | None = None,
    secret: str = SECRETS["linear"],
) -> Delivery:
    """Linear signs the body, which carries its own `webhookTimestamp` (ms): stamped now."""
    if isinstance(payload, dict):
        stamp = time.time() if sent_at is None else sent_at
        payload = {**payload, "webhookTimestamp": int(stamp * 1000)}
    body = _encode(payload)
    headers = {
        "Linear-Signature": _hex(secret, body),
        "Linear-Delivery": delivery or str(uuid.uuid4()),
        "Content-Type": "application/json",
    }
    kind = payload.get("type") if isinstance(payload, dict) else None
    if isinstance(kind, str) and kind.isascii():  # a header carries ASCII only
        headers["Linear-Event"] = kind
    return Delivery("/webhooks/linear", body, headers)


def signed(provider: str, key: str, payload: dict[str, Any] | bytes) -> Delivery:
    """A correctly signed delivery of `payload` as event `key`, from any provider."""
    if provider == "github":
        return github(key, payload)
    if provider == "gitlab":
        return gitlab(key, payload)
    if provider not in SENDERS:
        delivery: Delivery = own_sending(provider).signed(key, payload)
        return delivery
    return {"slack": slack, "jira": jira, "linear": linear}[provider](payload)


def post(client: Any, delivery: Delivery) -> Any:
    """Send a delivery as the provider would (`client`: a Starlette TestClient or httpx)."""
    return client.post(delivery.path, content=delivery.body, headers=delivery.headers)
