"""The token a Forgejo job acts with: the bot's (`RESOLVER_FORGEJO_TOKEN`, or one stored for
the instance with `resolver tokens set --provider forgejo --installation <url>`), else the
requester's own OAuth token from signing in, renewed before it expires."""

from __future__ import annotations

from typing import Final

from integrations.forgejo import signin
from integrations.forgejo.settings import ForgejoSettings
from integrations.toolkit import tokens
from resolver.contract.errors import PermanentCallbackError
from resolver.core.settings import Settings


def instance(settings: Settings) -> str:
    """The configured instance's address; a permanent error when there is none."""
    url = ForgejoSettings.of(settings).url
    if not url:
        raise PermanentCallbackError("no Forgejo instance is configured (RESOLVER_FORGEJO_URL)")
    return url


TOKENS: Final = tokens.JobTokens(
    provider="forgejo",
    display_name="Forgejo",
    installation=instance,
    section=ForgejoSettings,
    refresh=signin.refresh,
)
bot_token: Final = TOKENS.bot_token


class JobToken(tokens.JobToken):
    def __init__(self, requester_id: int | None, settings: Settings) -> None:
        super().__init__(TOKENS, requester_id, settings)
