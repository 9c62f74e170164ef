"""Linear's settings: `RESOLVER_LINEAR_*`. `resolver setup linear` stores the webhook's."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from resolver.core.settings import ProviderSettings


class LinearSettings(ProviderSettings):
    """Linear: its GraphQL endpoint, its webhook and the OAuth app that proves an account."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_LINEAR_")
    oauth_client = ("client_id", "client_secret")

    api_url: str = Field(
        default="https://api.linear.app/graphql", description="Linear GraphQL endpoint."
    )
    web_url: str = Field(
        default="https://linear.app", description="Linear's web address (OAuth consent)."
    )
    client_id: str | None = Field(
        default=None, description="A Linear OAuth app's client id, for proving a Linear account."
    )
    client_secret: SecretStr | None = Field(default=None, description="That Linear app's secret.")
    webhook_secret: SecretStr | None = Field(
        default=None, description="Linear webhook signing secret."
    )
