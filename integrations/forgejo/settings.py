"""Forgejo's settings: `RESOLVER_FORGEJO_*` (a Gitea instance is configured the same way).

Read from the environment and `.env` as the service's own settings are. Once the provider
contract has its `ProviderSettings` base, this class derives from it instead (the fields stay).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from resolver.contract.inbound import secret_value


class ForgejoSettings(BaseSettings):
    """A Forgejo or Gitea instance: the bot's token, its webhook, and signing in with it."""

    model_config = SettingsConfigDict(
        env_prefix="RESOLVER_FORGEJO_", env_file=".env", extra="ignore", frozen=True
    )

    url: str | None = Field(
        default=None, description="The instance's address, e.g. https://codeberg.org."
    )
    token: SecretStr | None = Field(
        default=None, description="The bot account's access token (repository read and write)."
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="The secret of the webhook that sends Resolver its events."
    )
    client_id: str | None = Field(
        default=None, description="An OAuth2 application's client id, for signing in."
    )
    client_secret: SecretStr | None = Field(
        default=None, description="That OAuth2 application's client secret."
    )
    hook_type: Literal["forgejo", "gitea"] = Field(
        default="forgejo", description="The webhook type to create: `gitea` on a Gitea instance."
    )

    @property
    def webhook_enabled(self) -> bool:
        """The webhook is on only with an instance and a secret: it never runs unsigned."""
        return bool(self.url) and secret_value(self.webhook_secret) is not None

    @property
    def sign_in_enabled(self) -> bool:
        return bool(self.url and self.client_id) and secret_value(self.client_secret) is not None
