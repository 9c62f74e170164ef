"""Sixth, a minimal chat tool: messages that mention the bot become requests, and the bot
answers in the message's thread. Built as a folder under `integrations/` is (compare
`integrations/linear/__init__.py`): the descriptor, with the reply side imported on first use.

Its signing secret is a setting of its own (`settings.py`, `RESOLVER_SIXTH_SIGNING_SECRET`),
composed into the service's settings through its descriptor, as every provider's is.
"""

from __future__ import annotations

from typing import Final

from resolver.contract.inbound import Headers, Integration, SignatureError, secret_value
from resolver.contract.outbound import Conversation
from resolver.contract.provider import Provider
from resolver.contract.setup import ProviderSetup
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings
from tests.integrations.sixth.provider.events import parse_event
from tests.integrations.sixth.provider.routes import IGNORED, ROUTES
from tests.integrations.sixth.provider.settings import SixthSettings
from tests.integrations.sixth.provider.verify import verify_signature

NAME: Final = "sixth"
SECRET_ENV: Final = "RESOLVER_SIXTH_SIGNING_SECRET"


def _secret(settings: Settings) -> str | None:
    return secret_value(SixthSettings.of(settings).signing_secret)


def _enabled(settings: Settings) -> bool:
    return _secret(settings) is not None


def _verify(headers: Headers, body: bytes, settings: Settings, now: float) -> None:
    secret = _secret(settings)
    if secret is None:
        raise SignatureError("no Sixth signing secret configured")
    verify_signature(headers, body, secret, now)


INTEGRATION: Final = Integration(
    name=NAME,
    routes=ROUTES,
    ignored=IGNORED,
    enabled=_enabled,
    verify=_verify,
    parse=parse_event,
)


def _conversation(
    context: TaskTrigger, requester_id: int | None, settings: Settings
) -> Conversation:
    from tests.integrations.sixth.provider.conversation import conversation_for

    return conversation_for(context, requester_id, settings)


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A default repository is set per channel."""
    channel = trigger.part.get("channel")
    return channel if isinstance(channel, str) and channel else None


def _setup() -> ProviderSetup:
    from tests.integrations.sixth.provider.setup import SETUP

    return SETUP


PROVIDER: Final = Provider(
    name=NAME,
    display_name="Sixth",
    integration=INTEGRATION,
    conversation=_conversation,
    settings=SixthSettings,
    secrets=("sixth_signing_secret",),
    kind="thread",
    route_scope=_route_scope,
    setup=_setup,
)
