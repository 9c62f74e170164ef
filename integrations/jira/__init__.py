"""Jira: comments mentioning the bot, and the trigger label (admin webhooks with a secret)."""

from __future__ import annotations

from integrations.jira.events import parse_event
from integrations.jira.routes import IGNORED, ROUTES
from integrations.jira.signin import PROOF
from integrations.jira.verify import verify_signature
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.outbound import Conversation
from resolver.contract.provider import Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings


def _enabled(settings: Settings) -> bool:
    return secret_value(settings.jira_webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(settings.jira_webhook_secret)
    if secret is None:
        raise SignatureError("no Jira webhook secret configured")
    verify_signature(headers, body, secret)


INTEGRATION = Integration(
    name="jira",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _conversation(context: TaskTrigger, requester_id: int | None) -> Conversation:
    from integrations.jira.provider import conversation_for

    return conversation_for(context, requester_id)


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A default repository is set per project (its key)."""
    key = trigger.part.get("project_key")
    return key if isinstance(key, str) and key else None


def _setup() -> ProviderSetup:
    from integrations.jira.hooks import SETUP

    return SETUP


def _preflight(scope: PreflightScope) -> list[Check]:
    from integrations.jira.preflight import checks

    return checks(scope)


# The reply side is imported on first use: the web process never loads the clients.
PROVIDER = Provider(
    name="jira",
    display_name="Jira",
    integration=INTEGRATION,
    conversation=_conversation,
    secrets=("jira_webhook_secret",),
    kind="ticket",
    route_scope=_route_scope,
    proof=PROOF,
    setup=_setup,
    preflight=_preflight,
)
