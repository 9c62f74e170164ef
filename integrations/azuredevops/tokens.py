"""The token an Azure DevOps job acts with: the bot's (`RESOLVER_AZUREDEVOPS_TOKEN`, a personal
access token or an Entra service principal's token, or one stored for the organisation with
`resolver tokens set --provider azuredevops --installation <url>`)."""

from __future__ import annotations

from integrations.azuredevops.settings import AzureDevOpsSettings
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.inbound import secret_value
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token


def organisation(settings: Settings) -> str:
    """The configured organisation's address; a permanent error when there is none."""
    url = AzureDevOpsSettings.of(settings).url
    if not url:
        raise PermanentCallbackError(
            "no Azure DevOps organisation is configured (RESOLVER_AZUREDEVOPS_URL)"
        )
    return url


def bot_token(settings: Settings) -> str | None:
    found = secret_value(AzureDevOpsSettings.of(settings).token)
    if found is None:
        found = stored_token("azuredevops", installation=organisation(settings), settings=settings)
    return found


class JobToken:
    """Called before every call, so a token replaced in the vault is picked up."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def __call__(self) -> str:
        token = bot_token(self._settings)
        if token is None:
            url = organisation(self._settings)
            raise PermanentCallbackError(
                f"no Azure DevOps token for {url}: set RESOLVER_AZUREDEVOPS_TOKEN to the bot's "
                f'personal access token, or store it with `printf %s "$TOKEN" | resolver tokens '
                f"set --provider azuredevops --installation {url}`"
            )
        register_secret(token)
        return token
