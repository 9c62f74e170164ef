"""Linear: comments mentioning the bot, and the trigger label."""

from __future__ import annotations

from integrations.linear.events import parse_event
from integrations.linear.routes import IGNORED, ROUTES
from integrations.linear.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    return secret_value(settings.linear_webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(settings.linear_webhook_secret)
    if secret is None:
        raise SignatureError("no Linear webhook secret configured")
    verify_signature(headers, body, secret, now)


integration = Integration(
    name="linear",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)
