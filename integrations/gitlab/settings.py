"""GitLab's settings: `RESOLVER_GITLAB_*`. `resolver setup gitlab` stores the webhook's."""

from __future__ import annotations

from types import MappingProxyType

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from resolver.core.settings import ProviderSettings, web_address


class GitLabSettings(ProviderSettings):
    """GitLab.com or a self-managed instance: its webhook and signing in."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_GITLAB_")
    oauth_client = ("client_id", "client_secret")
    hints = MappingProxyType({"url": "the instance's address, e.g. https://gitlab.example.com"})

    url: str = Field(default="https://gitlab.com", description="GitLab instance URL.")
    client_id: str | None = Field(
        default=None, description="A GitLab OAuth application's id, for signing in."
    )
    client_secret: SecretStr | None = Field(
        default=None, description="That GitLab application's secret."
    )
    webhook_token: SecretStr | None = Field(
        default=None, description="GitLab X-Gitlab-Token value."
    )
    signing_token: SecretStr | None = Field(
        default=None, description="GitLab signing token (whsec_…, Standard Webhooks)."
    )

    _address = field_validator("url")(web_address)
