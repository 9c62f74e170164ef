"""The token a Forgejo job acts with: the bot's (`RESOLVER_FORGEJO_TOKEN`, or one stored for
the instance with `resolver tokens set --provider forgejo --installation <url>`), else the
requester's own OAuth token from signing in, renewed before it expires."""

from __future__ import annotations

from integrations.forgejo import signin
from integrations.forgejo.settings import ForgejoSettings
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.inbound import secret_value
from resolver.contract.signin import ForgeUnreachableError, IssuedToken, sign_in_again
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import TokenRevokedError, stored_token


def instance(settings: Settings) -> str:
    """The configured instance's address; a permanent error when there is none."""
    url = ForgejoSettings.of(settings).url
    if not url:
        raise PermanentCallbackError("no Forgejo instance is configured (RESOLVER_FORGEJO_URL)")
    return url


def bot_token(settings: Settings) -> str | None:
    """The bot's token: the setting, else the one stored for the instance."""
    found = secret_value(ForgejoSettings.of(settings).token)
    if found is None:
        found = stored_token("forgejo", installation=instance(settings), settings=settings)
    return found


def user_token(requester_id: int, settings: Settings) -> str | None:
    def renew(refresh_token: str) -> IssuedToken:
        return signin.refresh(settings, refresh_token)

    try:
        return stored_token("forgejo", user_id=requester_id, settings=settings, refresh=renew)
    except TokenRevokedError:
        raise PermanentCallbackError(sign_in_again("Forgejo", settings)) from None
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
            url = instance(self._settings)
            raise PermanentCallbackError(
                f"no Forgejo token for {url}: set RESOLVER_FORGEJO_TOKEN to the bot's, or store "
                f'it with `printf %s "$TOKEN" | resolver tokens set --provider forgejo '
                f"--installation {url}`"
            )
        register_secret(token)
        return token
