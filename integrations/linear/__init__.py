"""Linear: comments mentioning the bot, and the trigger label."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from integrations.linear.events import parse_event
from integrations.linear.routes import IGNORED, ROUTES
from integrations.linear.settings import LinearSettings
from integrations.linear.signin import PROOF
from integrations.linear.verify import verify_signature
from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.provider import ImportedOnCall, Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings

if TYPE_CHECKING:  # mypy checks the functions named below against these modules
    from integrations.linear import preflight, provider
else:  # imported on first call: the web process never loads the clients
    preflight = ImportedOnCall("integrations.linear.preflight")
    provider = ImportedOnCall("integrations.linear.provider")


def _enabled(settings: Settings) -> bool:
    return secret_value(LinearSettings.of(settings).webhook_secret) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = secret_value(LinearSettings.of(settings).webhook_secret)
    if secret is None:
        raise SignatureError("no Linear webhook secret configured")
    verify_signature(headers, body, secret, now)


INTEGRATION = Integration(
    name="linear",
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A default repository is set per team (its key, else its id)."""
    team = trigger.part.get("team")
    if not isinstance(team, Mapping):
        return None
    for value in (team.get("key"), team.get("id")):
        if isinstance(value, str) and value:
            return value
    return None


def _setup() -> ProviderSetup:
    from integrations.linear.setup import SETUP

    return SETUP


PROVIDER = Provider(
    name="linear",
    display_name="Linear",
    integration=INTEGRATION,
    conversation=provider.conversation_for,
    settings=LinearSettings,
    secrets=("linear_webhook_secret",),
    kind="ticket",
    route_scope=_route_scope,
    proof=PROOF,
    setup=_setup,
    preflight=preflight.checks,
)
