"""Jira: comments mentioning the bot, and the trigger label (admin webhooks with a secret)."""

from __future__ import annotations

from integrations.jira.events import parse_event
from integrations.jira.routes import IGNORED, ROUTES
from integrations.jira.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    return secret_value(settings.jira_webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(settings.jira_webhook_secret)
    if secret is None:
        raise SignatureError("no Jira webhook secret configured")
    verify_signature(headers, body, secret)


integration = Integration(
    name="jira",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)
