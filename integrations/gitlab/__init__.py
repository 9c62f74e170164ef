"""GitLab: notes on issues and merge requests, and the trigger label."""

from __future__ import annotations

from integrations.gitlab.events import parse_event
from integrations.gitlab.routes import IGNORED, ROUTES
from integrations.gitlab.verify import verify_delivery
from resolver.contract.inbound import Headers, Integration, secret_value
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    token = secret_value(settings.gitlab_webhook_token)
    return token is not None or secret_value(settings.gitlab_signing_token) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    token = secret_value(settings.gitlab_webhook_token)
    signing = secret_value(settings.gitlab_signing_token)
    verify_delivery(headers, body, token, signing, now)


integration = Integration(
    name="gitlab",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)
