"""Bitbucket's sending side, faked: recorded payloads, signed the way Bitbucket signs them
(computed here with hmac, independently of the code under test), with Cloud's headers or Data
Center's."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import uuid
from pathlib import Path
from typing import Any

import integrations.bitbucket
from integrations.bitbucket.routes import IGNORED, ROUTES
from tests.integrations.deliveries import Delivery

SECRET = "bitbucket-test-secret"
FIXTURES = Path(integrations.bitbucket.__file__).parent / "fixtures"
KNOWN = {key.replace(":", "_"): key for key in (*ROUTES, *IGNORED)}


def fixture_paths() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


def fixture_key(path: Path) -> str:
    """The event key of a fixture, from its name `<event key, : as _>__<detail>.json`."""
    prefix = path.name.split("__", 1)[0]
    return KNOWN.get(prefix, prefix)


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return copy.deepcopy(data)


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def headers_for(key: str, body: bytes, *, secret: str | None = SECRET) -> dict[str, str]:
    """The headers of a delivery of event `key` (lower-cased): Cloud's (`X-Request-UUID`,
    `X-Hook-UUID`) for its events, Data Center's (`X-Request-Id`) for `pr:` and
    `repo:refs_changed`; no signature when `secret` is None (a hook without one)."""
    request = str(uuid.uuid4())
    headers = {"content-type": "application/json", "x-event-key": key}
    if key.startswith(("pr:", "diagnostics:")) or key == "repo:refs_changed":
        headers["x-request-id"] = request
    else:
        headers |= {"x-request-uuid": request, "x-hook-uuid": "{" + str(uuid.uuid4()) + "}"}
        headers["x-attempt-number"] = "1"
    if secret is not None:
        headers["x-hub-signature"] = sign(body, secret)
    return headers


# What the shared delivery fake (`tests.integrations.deliveries.own_sending`) reads of Bitbucket.
ENV = {"RESOLVER_BITBUCKET_WEBHOOK_SECRET": SECRET}
# alice, who sends the recorded payloads: on Cloud by her UUID. The shared suites take her
# Cloud comment (a Data Center one, the first by name, makes no job).
CLOUD_SENDER = "{0c1a7f6e-1f0b-4c2e-9a55-3f1b7c9d2a11}"
SENDER = CLOUD_SENDER
COMMENT_FIXTURE = "pullrequest_comment_created__on_pull"


def signed(key: str, payload: dict[str, Any] | bytes) -> Delivery:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Delivery("/webhooks/bitbucket", body, headers_for(key, body))


def set_text(payload: dict[str, Any], text: str) -> None:
    """A comment's text, in Cloud's shape (`content.raw`) or Data Center's (`text`)."""
    comment = payload["comment"]
    if "content" in comment:
        comment["content"]["raw"] = text
    else:
        comment["text"] = text
