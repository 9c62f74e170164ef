"""The token a GitLab job acts with: the bot's, stored for the instance, else the requester's
own OAuth token from signing in (renewed before it expires), whose 401 means it was revoked."""

from __future__ import annotations

import logging

from integrations.gitlab import signin
from integrations.gitlab.settings import GitLabSettings
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.contract.signin import ForgeUnreachableError, IssuedToken, sign_in_again
from resolver.core.logs import log, register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import Clock, TokenRevokedError, refuse_token, stored_token

logger = logging.getLogger(__name__)


def user_token(requester_id: int, settings: Settings, clock: Clock | None = None) -> str | None:
    """The user's newest GitLab token, renewed first when it expires within minutes; a token
    GitLab refused is a PermanentCallbackError that tells them to sign in again."""

    def renew(refresh_token: str) -> IssuedToken:
        return signin.refresh(settings, refresh_token)

    try:
        return stored_token(
            "gitlab", user_id=requester_id, settings=settings, refresh=renew, clock=clock
        )
    except TokenRevokedError:
        raise PermanentCallbackError(sign_in_again("GitLab", settings)) from None
    except ForgeUnreachableError as error:
        raise TransientCallbackError(str(error)) from None


class JobToken:
    """Called before every call (a token replaced in the vault is picked up); `refused` says
    what GitLab's 401 means."""

    def __init__(self, requester_id: int | None, settings: Settings) -> None:
        self._requester_id, self._settings = requester_id, settings
        self._user_token: str | None = None

    def __call__(self) -> str:
        settings = self._settings
        instance = GitLabSettings.of(settings).url
        token = stored_token("gitlab", installation=instance, settings=settings)
        self._user_token = None
        if token is None and self._requester_id is not None:
            token = self._user_token = user_token(self._requester_id, settings)
        if token is None:
            raise PermanentCallbackError(
                f"no GitLab token for {instance}: an admin can store the bot's with "
                f'`printf %s "$TOKEN" | resolver tokens set --provider gitlab '
                f"--installation {instance}`"
            )
        register_secret(token)
        return token

    def refused(self) -> CallbackError | None:
        """For the requester's own token: it was revoked, which is recorded and told."""
        if self._user_token is None or self._requester_id is None:
            return None
        refuse_token("gitlab", self._requester_id, self._user_token, self._settings)
        log(logger, logging.WARNING, "gitlab.user_token_refused", user=self._requester_id)
        return PermanentCallbackError(sign_in_again("GitLab", self._settings))


def token_for_job(requester_id: int | None, settings: Settings) -> str:
    """The bot's token for this GitLab instance, else the requester's own; none is permanent."""
    return JobToken(requester_id, settings)()
