"""The token a forge's job acts with, written once: the bot's (a setting, else one stored for the
forge's address), else the requester's own OAuth token from signing in, renewed before it
expires. Each forge's `tokens.py` says where its token lives and what is said without one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import SecretStr

from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.contract.inbound import secret_value
from resolver.contract.signin import ForgeUnreachableError, IssuedToken, sign_in_again
from resolver.core.logs import register_secret
from resolver.core.settings import ProviderSettings, Settings
from resolver.store.secrets import Clock, TokenRevokedError, stored_token


@dataclass(frozen=True)
class JobTokens:
    """Where one forge's job tokens live."""

    provider: str
    """The provider's name in the vault."""
    display_name: str
    installation: Callable[[Settings], str]
    """The forge's address, for which the bot's token is stored."""
    section: type[ProviderSettings] | None = None
    """The provider's settings, whose `token` is the bot's and comes before a stored one."""
    bot: str = "the bot's"
    """What the bot's token is, as a person who has to make one reads it."""
    refresh: Callable[[Settings, str], IssuedToken] | None = None
    """The sign-in's refresh grant; None: a job never acts with the requester's token."""

    def setting(self, settings: Settings) -> str | None:
        found = getattr(self.section.of(settings), "token", None) if self.section else None
        return secret_value(found) if isinstance(found, SecretStr) else None

    def missing(self, settings: Settings) -> str:
        """What a job is told when there is no token at all."""
        where = self.installation(settings)
        store = (
            f'`printf %s "$TOKEN" | resolver tokens set --provider {self.provider} '
            f"--installation {where}`"
        )
        if self.section is None:
            return (
                f"no {self.display_name} token for {where}: an admin can store {self.bot} with "
                f"{store}"
            )
        variable = self.section.variable("token")
        return (
            f"no {self.display_name} token for {where}: set {variable} to {self.bot}, or store "
            f"it with {store}"
        )

    def bot_token(self, settings: Settings) -> str | None:
        """The bot's token: the setting, else the one stored for the forge's address."""
        found = self.setting(settings)
        if found is None:
            installation = self.installation(settings)
            found = stored_token(self.provider, installation=installation, settings=settings)
        return found

    def user_token(
        self, requester_id: int, settings: Settings, clock: Clock | None = None
    ) -> str | None:
        """The user's newest token, renewed first when it expires within minutes; a token the
        forge refused is a PermanentCallbackError that tells them to sign in again."""
        refresh = self.refresh
        if refresh is None:
            return None

        def renew(refresh_token: str) -> IssuedToken:
            return refresh(settings, refresh_token)

        try:
            return stored_token(
                self.provider, user_id=requester_id, settings=settings, refresh=renew, clock=clock
            )
        except TokenRevokedError:
            raise PermanentCallbackError(sign_in_again(self.display_name, settings)) from None
        except ForgeUnreachableError as error:
            raise TransientCallbackError(str(error)) from None


class JobToken:
    """Called before every call, so a token replaced in the vault is picked up; `user_token`
    is the requester's own token when that is what the last call acted with."""

    def __init__(self, tokens: JobTokens, requester_id: int | None, settings: Settings) -> None:
        self._tokens, self._requester_id, self._settings = tokens, requester_id, settings
        self.user_token: str | None = None

    def __call__(self) -> str:
        token = self._tokens.bot_token(self._settings)
        self.user_token = None
        if token is None and self._requester_id is not None:
            token = self.user_token = self._tokens.user_token(self._requester_id, self._settings)
        if token is None:
            raise PermanentCallbackError(self._tokens.missing(self._settings))
        # Often short-lived (a person's, an installation's): masked among the most recent; one
        # from the settings is masked for good where the settings are read.
        register_secret(token, passing=True)
        return token
