"""Azure DevOps's sending side, faked: recorded payloads sent as a Web Hooks subscription
sends them, with the basic-auth credentials and the custom header it was created with (built
here with base64, independently of the code under test)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import integrations.azuredevops
from tests.integrations.deliveries import Delivery

USER = "resolver"
PASSWORD = "azure-test-password"
HEADER_SECRET = "azure-test-header-secret"
FIXTURES = Path(integrations.azuredevops.__file__).parent / "fixtures"

# What the shared delivery fake (`tests.integrations.deliveries.own_sending`) reads.
ENV = {
    "RESOLVER_AZUREDEVOPS_URL": "https://dev.azure.com/contoso",
    "RESOLVER_AZUREDEVOPS_WEBHOOK_USER": USER,
    "RESOLVER_AZUREDEVOPS_WEBHOOK_PASSWORD": PASSWORD,
    "RESOLVER_AZUREDEVOPS_WEBHOOK_HEADER_SECRET": HEADER_SECRET,
}
SENDER = "d6245f20-2af8-44f4-9451-8107cb2767db"  # Alice, who sends the recorded payloads


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def headers_for(
    *, user: str = USER, password: str = PASSWORD, header_secret: str | None = HEADER_SECRET
) -> dict[str, str]:
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    headers = {"content-type": "application/json", "authorization": f"Basic {basic}"}
    if header_secret is not None:
        headers["x-resolver-secret"] = header_secret
    return headers


def signed(key: str, payload: dict[str, Any] | bytes, **auth: Any) -> Delivery:
    """A delivery of `payload` (its `eventType` is the key), with the hook's credentials."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Delivery("/webhooks/azuredevops", body, headers_for(**auth))


def set_text(payload: dict[str, Any], text: str) -> None:
    """The text of a thread comment, a work item comment or a pull request's description."""
    resource = payload["resource"]
    if "comment" in resource:
        resource["comment"]["content"] = text
    elif "fields" in resource:
        resource["fields"]["System.History"] = text
    else:
        resource["description"] = text
