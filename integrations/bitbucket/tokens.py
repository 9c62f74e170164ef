"""The token a Bitbucket job acts with: the bot's (`RESOLVER_BITBUCKET_TOKEN`, a workspace or
repository access token, or one stored for the API with `resolver tokens set --provider
bitbucket --installation <api url>`), else the requester's own OAuth token from signing in,
renewed before it expires."""

from __future__ import annotations

from typing import Final

from integrations.bitbucket import signin
from integrations.bitbucket.settings import BitbucketSettings
from integrations.toolkit import tokens
from resolver.core.settings import Settings


def api_url(settings: Settings) -> str:
    return BitbucketSettings.of(settings).api_url


TOKENS: Final = tokens.JobTokens(
    provider="bitbucket",
    display_name="Bitbucket",
    installation=api_url,
    section=BitbucketSettings,
    bot="the bot's access token",
    refresh=signin.refresh,
)
bot_token: Final = TOKENS.bot_token


class JobToken(tokens.JobToken):
    def __init__(self, requester_id: int | None, settings: Settings) -> None:
        super().__init__(TOKENS, requester_id, settings)
