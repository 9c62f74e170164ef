"""Sixth, a minimal chat tool: messages that mention the bot become requests, and the bot
answers in the message's thread. Built as a folder under `integrations/` is (compare
`integrations/linear/__init__.py`): the descriptor, with the reply side imported on first use.

Its signing secret comes from the environment (`RESOLVER_SIXTH_SIGNING_SECRET`): `Settings`
has no field for a provider it does not know, and ignores unknown variables.
"""

from __future__ import annotations

import os
from typing import Final

from resolver.contract.inbound import Headers, Integration, SignatureError
from resolver.contract.outbound import Conversation
from resolver.contract.provider import Provider
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings
from tests.integrations.sixth.provider.events import parse_event
from tests.integrations.sixth.provider.routes import IGNORED, ROUTES
from tests.integrations.sixth.provider.verify import verify_signature

NAME: Final = "sixth"
SECRET_ENV: Final = "RESOLVER_SIXTH_SIGNING_SECRET"


def _secret() -> str | None:
    return os.environ.get(SECRET_ENV) or None


def _enabled(_settings: Settings) -> bool:
    return _secret() is not None


def _verify(headers: Headers, body: bytes, _settings: Settings, now: float) -> None:
    secret = _secret()
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


def _conversation(context: TaskTrigger, requester_id: int | None) -> Conversation:
    from tests.integrations.sixth.provider.conversation import conversation_for

    return conversation_for(context, requester_id)


def _route_scope(trigger: TaskTrigger) -> str | None:
    """A default repository is set per channel."""
    channel = trigger.part.get("channel")
    return channel if isinstance(channel, str) and channel else None


PROVIDER: Final = Provider(
    name=NAME,
    display_name="Sixth",
    integration=INTEGRATION,
    conversation=_conversation,
    secrets=("sixth_signing_secret",),
    kind="thread",
    route_scope=_route_scope,
)
