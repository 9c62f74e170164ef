"""The token a GitLab job acts with: the bot's, stored for the instance, else the requester's
own OAuth token from signing in (renewed before it expires), whose 401 means it was revoked."""

from __future__ import annotations

import logging
from typing import Final

from integrations.gitlab import signin
from integrations.gitlab.settings import GitLabSettings
from integrations.toolkit import tokens
from resolver.contract.errors import CallbackError, PermanentCallbackError
from resolver.contract.signin import sign_in_again
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.store.secrets import refuse_token

logger = logging.getLogger(__name__)


# The bot's token is only ever stored (`resolver tokens set`), never a setting.
TOKENS: Final = tokens.JobTokens(
    provider="gitlab",
    display_name="GitLab",
    installation=lambda settings: GitLabSettings.of(settings).url,
    refresh=signin.refresh,
)
user_token: Final = TOKENS.user_token


class JobToken(tokens.JobToken):
    """Called before every call (a token replaced in the vault is picked up); `refused` says
    what GitLab's 401 means."""

    def __init__(self, requester_id: int | None, settings: Settings) -> None:
        super().__init__(TOKENS, requester_id, settings)

    def refused(self) -> CallbackError | None:
        """For the requester's own token: it was revoked, which is recorded and told."""
        if self.user_token is None or self._requester_id is None:
            return None
        refuse_token("gitlab", self._requester_id, self.user_token, self._settings)
        log(logger, logging.WARNING, "gitlab.user_token_refused", user=self._requester_id)
        return PermanentCallbackError(sign_in_again("GitLab", self._settings))


def token_for_job(requester_id: int | None, settings: Settings) -> str:
    """The bot's token for this GitLab instance, else the requester's own; none is permanent."""
    return JobToken(requester_id, settings)()
