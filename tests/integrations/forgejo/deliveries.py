"""Forgejo's sending side, faked: recorded payloads, signed the way Forgejo signs them (computed
here with hmac, independently of the code under test), with Forgejo's or Gitea's headers."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import uuid
from pathlib import Path
from typing import Any

import integrations.forgejo
from integrations.forgejo.routes import IGNORED, ROUTES
from tests.integrations.deliveries import Delivery

SECRET = "forgejo-test-secret"
FIXTURES = Path(integrations.forgejo.__file__).parent / "fixtures"


def fixture_paths() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


def fixture_key(path: Path) -> str:
    """The event key of a fixture, from its name `<event type>.<action>__<detail>.json`."""
    return path.name.split("__", 1)[0]


def load(name: str) -> dict[str, Any]:
    """A fresh, mutable copy of fixture `name` (its file name without `.json`)."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return copy.deepcopy(data)


def sign(body: bytes, secret: str = SECRET) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def headers_for(
    key: str, body: bytes, *, gitea: bool = False, secret: str = SECRET
) -> dict[str, str]:
    """The headers of a delivery of event `key` (lower-cased, as the endpoint passes them):
    Forgejo's set, with Gitea's beside it; Gitea's alone with `gitea=True`."""
    event_type = key.split(".", 1)[0]
    delivery, signature = str(uuid.uuid4()), sign(body, secret)
    names = ["gitea"] if gitea else ["forgejo", "gitea"]
    headers = {"content-type": "application/json"}
    for name in names:
        headers |= {
            f"x-{name}-delivery": delivery,
            f"x-{name}-event": event_type,
            f"x-{name}-event-type": event_type,
            f"x-{name}-signature": signature,
        }
    return headers


KNOWN = set(ROUTES) | IGNORED


# What the shared delivery fake (`tests.integrations.deliveries.own_sending`) reads of Forgejo.
ENV = {"RESOLVER_FORGEJO_URL": "https://forgejo.example", "RESOLVER_FORGEJO_WEBHOOK_SECRET": SECRET}
SENDER = "2"  # alice, who sends the recorded payloads


def signed(key: str, payload: dict[str, Any] | bytes) -> Delivery:
    """A delivery of event `key`, signed as Forgejo signs it."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Delivery("/webhooks/forgejo", body, headers_for(key, body))


def set_text(payload: dict[str, Any], text: str) -> None:
    payload["comment"]["body"] = text
