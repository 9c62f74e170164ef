"""Jira: comments mentioning the bot, and the trigger label (admin webhooks with a secret)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from integrations.jira.events import parse_event
from integrations.jira.routes import IGNORED, ROUTES
from integrations.jira.settings import JiraSettings
from integrations.jira.signin import PROOF
from integrations.jira.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.jira import preflight, provider
else:  # imported on first call: the web process never loads the clients
    preflight = ImportedOnCall("integrations.jira.preflight")
    provider = ImportedOnCall("integrations.jira.provider")


def _enabled(settings: Settings) -> bool:
    return secret_value(JiraSettings.of(settings).webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(JiraSettings.of(settings).webhook_secret)
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


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A default repository is set per project (its key)."""
    key = trigger.part.get("project_key")
    return key if isinstance(key, str) and key else None


def _setup() -> ProviderSetup:
    from integrations.jira.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="jira",
    display_name="Jira",
    integration=INTEGRATION,
    conversation=provider.conversation_for,
    settings=JiraSettings,
    secrets=("jira_webhook_secret",),
    kind="ticket",
    route_scope=_route_scope,
    proof=PROOF,
    setup=_setup,
    preflight=preflight.checks,
)
