"""Slack: app mentions in channels and threads, and follow-ups in the bot's threads."""

from __future__ import annotations

from integrations.slack.events import parse_event
from integrations.slack.routes import IGNORED, ROUTES
from integrations.slack.verify import verify_request
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    return secret_value(settings.slack_signing_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(settings.slack_signing_secret)
    if secret is None:
        raise SignatureError("no Slack signing secret configured")
    verify_request(headers, body, secret, now)


integration = Integration(
    name="slack",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)
