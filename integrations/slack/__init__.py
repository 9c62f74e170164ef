"""Slack: app mentions in channels and threads, and follow-ups in the bot's threads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations.slack.events import parse_event
from integrations.slack.routes import IGNORED, ROUTES
from integrations.slack.settings import SlackSettings
from integrations.slack.signin import PROOF
from integrations.slack.verify import verify_request
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.slack import preflight, provider
else:  # imported on first call: the web process never loads the clients
    preflight = ImportedOnCall("integrations.slack.preflight")
    provider = ImportedOnCall("integrations.slack.provider")


def _enabled(settings: Settings) -> bool:
    return secret_value(SlackSettings.of(settings).signing_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(SlackSettings.of(settings).signing_secret)
    if secret is None:
        raise SignatureError("no Slack signing secret configured")
    verify_request(headers, body, secret, now)


INTEGRATION = Integration(
    name="slack",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A default repository is set per channel."""
    channel = trigger.part.get("channel")
    return channel if isinstance(channel, str) and channel else None


def _setup() -> ProviderSetup:
    from integrations.slack.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="slack",
    display_name="Slack",
    integration=INTEGRATION,
    conversation=provider.conversation_for,
    settings=SlackSettings,
    secrets=("slack_signing_secret",),
    kind="thread",
    route_scope=_route_scope,
    proof=PROOF,
    post_private=provider.post_private,
    greets_by_login=False,
    setup=_setup,
    preflight=preflight.checks,
)
