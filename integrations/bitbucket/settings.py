"""Bitbucket's settings: `RESOLVER_BITBUCKET_*` (Bitbucket Cloud; Data Center's webhooks are
verified with the same secret, then refused)."""

from __future__ import annotations

from types import MappingProxyType

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from resolver.contract.inbound import secret_value
from resolver.core.settings import ProviderSettings, web_address

CLOUD_API: str = "https://api.bitbucket.org/2.0"
CLOUD_WEB: str = "https://bitbucket.org"


class BitbucketSettings(ProviderSettings):
    """Bitbucket Cloud: the bot's access token, the webhook, and signing in with an OAuth
    consumer."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_BITBUCKET_")
    oauth_client = ("client_id", "client_secret")
    hints = MappingProxyType(
        {
            "api_url": "the REST 2.0 address, e.g. https://api.bitbucket.org/2.0",
            "web_url": "the web address people sign in at, e.g. https://bitbucket.org",
        }
    )

    api_url: str = Field(
        default=CLOUD_API, description="The REST API's address (Bitbucket Cloud's by default)."
    )
    web_url: str = Field(
        default=CLOUD_WEB,
        description="The web address of Bitbucket: its OAuth 2.0 pages are below it.",
    )
    token: SecretStr | None = Field(
        default=None,
        description="The bot's workspace or repository access token (pull requests: write; "
        "repository: admin, to read who may write; webhooks, to register the hook).",
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="The secret of the webhook that sends Resolver its events."
    )
    allow_unsigned: bool = Field(
        default=False,
        description="Accept deliveries without a signature when no webhook secret is set. "
        "Off: a hook without a secret is refused.",
    )
    client_id: str | None = Field(
        default=None, description="An OAuth 2.0 consumer's key, for signing in."
    )
    client_secret: SecretStr | None = Field(
        default=None, description="That OAuth 2.0 consumer's secret."
    )

    _address = field_validator("api_url", "web_url")(web_address)

    @property
    def webhook_enabled(self) -> bool:
        """On with a secret, or unsigned only when the operator said so."""
        return secret_value(self.webhook_secret) is not None or self.allow_unsigned

    @property
    def sign_in_enabled(self) -> bool:
        return bool(self.client_id) and secret_value(self.client_secret) is not None
