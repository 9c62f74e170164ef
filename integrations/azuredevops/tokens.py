"""The token an Azure DevOps job acts with: the bot's (`RESOLVER_AZUREDEVOPS_TOKEN`, a personal
access token or an Entra service principal's token, or one stored for the organisation with
`resolver tokens set --provider azuredevops --installation <url>`)."""

from __future__ import annotations

from typing import Final

from integrations.azuredevops.settings import AzureDevOpsSettings
from integrations.toolkit import tokens
from resolver.contract.errors import PermanentCallbackError
from resolver.core.settings import Settings


def organisation(settings: Settings) -> str:
    """The configured organisation's address; a permanent error when there is none."""
    url = AzureDevOpsSettings.of(settings).url
    if not url:
        raise PermanentCallbackError(
            "no Azure DevOps organisation is configured (RESOLVER_AZUREDEVOPS_URL)"
        )
    return url


# A job acts as the bot only: no refresh, so never with the requester's token.
TOKENS: Final = tokens.JobTokens(
    provider="azuredevops",
    display_name="Azure DevOps",
    installation=organisation,
    section=AzureDevOpsSettings,
    bot="the bot's personal access token",
)
bot_token: Final = TOKENS.bot_token


class JobToken(tokens.JobToken):
    def __init__(self, settings: Settings) -> None:
        super().__init__(TOKENS, None, settings)
