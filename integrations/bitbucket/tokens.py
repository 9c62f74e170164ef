"""The token a Bitbucket job acts with: the bot's (`RESOLVER_BITBUCKET_TOKEN`, a workspace or
repository access token, or one stored for the API with `resolver tokens set --provider
bitbucket --installation <api url>`), else the requester's own OAuth token from signing in,
renewed before it expires."""

from __future__ import annotations

from integrations.bitbucket import signin
from integrations.bitbucket.settings import BitbucketSettings
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.inbound import secret_value
from resolver.contract.signin import ForgeUnreachableError, IssuedToken, sign_in_again
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import TokenRevokedError, stored_token


def api_url(settings: Settings) -> str:
    return BitbucketSettings.of(settings).api_url


def bot_token(settings: Settings) -> str | None:
    """The bot's token: the setting, else the one stored for the API's address."""
    found = secret_value(BitbucketSettings.of(settings).token)
    if found is None:
        found = stored_token("bitbucket", installation=api_url(settings), settings=settings)
    return found


def user_token(requester_id: int, settings: Settings) -> str | None:
    def renew(refresh_token: str) -> IssuedToken:
        return signin.refresh(settings, refresh_token)

    try:
        return stored_token("bitbucket", user_id=requester_id, settings=settings, refresh=renew)
    except TokenRevokedError:
        raise PermanentCallbackError(sign_in_again("Bitbucket", settings)) from None
    except ForgeUnreachableError as error:
        raise TransientCallbackError(str(error)) from None


class JobToken:
    """Called before every call, so a token replaced in the vault is picked up."""

    def __init__(self, requester_id: int | None, settings: Settings) -> None:
        self._requester_id, self._settings = requester_id, settings

    def __call__(self) -> str:
        token = bot_token(self._settings)
        if token is None and self._requester_id is not None:
            token = user_token(self._requester_id, self._settings)
        if token is None:
            raise PermanentCallbackError(
                "no Bitbucket token: set RESOLVER_BITBUCKET_TOKEN to the bot's access token, or "
                'store it with `printf %s "$TOKEN" | resolver tokens set --provider bitbucket '
                f"--installation {api_url(self._settings)}`"
            )
        register_secret(token)
        return token
