"""Forgejo's settings: `RESOLVER_FORGEJO_*` (a Gitea instance is configured the same way)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from resolver.contract.inbound import secret_value
from resolver.core.settings import ProviderSettings, web_address


class ForgejoSettings(ProviderSettings):
    """A Forgejo or Gitea instance: the bot's token, its webhook, and signing in with it."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_FORGEJO_")
    oauth_client = ("client_id", "client_secret")
    hints = MappingProxyType({"url": "the instance's address, e.g. https://codeberg.org"})

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

    _address = field_validator("url")(web_address)

    @property
    def webhook_enabled(self) -> bool:
        """The webhook is on only with an instance and a secret: it never runs unsigned."""
        return bool(self.url) and secret_value(self.webhook_secret) is not None

    @property
    def sign_in_enabled(self) -> bool:
        return bool(self.url and self.client_id) and secret_value(self.client_secret) is not None

    def problems(self) -> tuple[tuple[str, str], ...]:
        if not self.url and (self.token or self.webhook_secret or self.client_id):
            return (("forgejo url", "RESOLVER_FORGEJO_URL is not set: name the instance"),)
        return ()
