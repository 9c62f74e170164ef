"""GitHub: issue and pull-request comments, reviews, labels and assignments."""

from __future__ import annotations

from integrations.github.events import parse_event
from integrations.github.routes import IGNORED, ROUTES
from integrations.github.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    return secret_value(settings.github_webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(settings.github_webhook_secret)
    if secret is None:
        raise SignatureError("no GitHub webhook secret configured")
    verify_signature(headers, body, secret)


integration = Integration(
    name="github",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)
