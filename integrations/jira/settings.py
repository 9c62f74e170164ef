"""Jira's settings: `RESOLVER_JIRA_*`, and the Atlassian OAuth app that proves a Jira
account, whose variables keep their `RESOLVER_ATLASSIAN_*` names."""

from __future__ import annotations

from types import MappingProxyType

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from resolver.core.settings import ProviderSettings, web_address


class JiraSettings(ProviderSettings):
    """A Jira site: its admin webhook, and the Atlassian app people prove accounts with."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_JIRA_")
    oauth_client = ("atlassian_client_id", "atlassian_client_secret")
    hints = MappingProxyType({"url": "the site's address, e.g. https://acme.atlassian.net"})

    url: str | None = Field(default=None, description="Jira site URL.")
    webhook_secret: SecretStr | None = Field(
        default=None, description="Jira admin webhook secret (X-Hub-Signature)."
    )
    atlassian_auth_url: str = Field(
        default="https://auth.atlassian.com",
        validation_alias="RESOLVER_ATLASSIAN_AUTH_URL",
        description="Atlassian's OAuth 2.0 (3LO) server.",
    )
    atlassian_api_url: str = Field(
        default="https://api.atlassian.com",
        validation_alias="RESOLVER_ATLASSIAN_API_URL",
        description="Atlassian's API (`/me`).",
    )
    atlassian_client_id: str | None = Field(
        default=None,
        validation_alias="RESOLVER_ATLASSIAN_CLIENT_ID",
        description="An Atlassian OAuth 2.0 app's client id, for proving a Jira account.",
    )
    atlassian_client_secret: SecretStr | None = Field(
        default=None,
        validation_alias="RESOLVER_ATLASSIAN_CLIENT_SECRET",
        description="That Atlassian app's secret.",
    )

    _addresses = field_validator("url", "atlassian_auth_url", "atlassian_api_url")(web_address)
