"""Slack: app mentions in channels and threads, and follow-ups in the bot's threads."""

from __future__ import annotations

from integrations.slack.events import parse_event
from integrations.slack.routes import IGNORED, ROUTES
from integrations.slack.signin import PROOF
from integrations.slack.verify import verify_request
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.outbound import Conversation
from resolver.contract.provider import Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    return secret_value(settings.slack_signing_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(settings.slack_signing_secret)
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


def _conversation(context: TaskTrigger, requester_id: int | None) -> Conversation:
    from integrations.slack.provider import conversation_for

    return conversation_for(context, requester_id)


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A default repository is set per channel."""
    channel = trigger.part.get("channel")
    return channel if isinstance(channel, str) and channel else None


def _post_private(context: TaskTrigger, external_id: str, text: str) -> None:
    from integrations.slack.provider import post_private

    post_private(context, external_id, text)


def _setup() -> ProviderSetup:
    from integrations.slack.app_setup import SETUP

    return SETUP


def _preflight(scope: PreflightScope) -> list[Check]:
    from integrations.slack.preflight import checks

    return checks(scope)


# The reply side is imported on first use: the web process never loads the clients.
PROVIDER = Provider(
    name="slack",
    display_name="Slack",
    integration=INTEGRATION,
    conversation=_conversation,
    secrets=("slack_signing_secret",),
    kind="thread",
    route_scope=_route_scope,
    proof=PROOF,
    post_private=_post_private,
    greets_by_login=False,
    setup=_setup,
    preflight=_preflight,
)
