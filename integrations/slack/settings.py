"""Slack's settings: `RESOLVER_SLACK_*`. `resolver setup slack` stores the app's."""

from __future__ import annotations

from types import MappingProxyType

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from resolver.core.settings import ProviderSettings


class SlackSettings(ProviderSettings):
    """The Slack app: its signing secret, its OAuth client and Slack's addresses."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_SLACK_")
    oauth_client = ("client_id", "client_secret")
    hints = MappingProxyType(
        {
            "api_url": "Slack's Web API, https://slack.com/api/ (GovSlack: its own)",
            "signing_secret": "the app's Basic Information page shows it",
        }
    )

    api_url: str = Field(default="https://slack.com/api/", description="Slack Web API base URL.")
    web_url: str = Field(
        default="https://slack.com", description="Slack's web address (Sign in with Slack)."
    )
    client_id: str | None = Field(
        default=None, description="The Slack app's client id, for proving a Slack account."
    )
    client_secret: SecretStr | None = Field(
        default=None, description="The Slack app's client secret."
    )
    signing_secret: SecretStr | None = Field(
        default=None, description="Slack signing secret; unset turns /webhooks/slack off."
    )
    app_id: str | None = Field(
        default=None, description="The Slack app's id, as `resolver setup slack` created it."
    )
