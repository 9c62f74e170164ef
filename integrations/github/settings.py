"""GitHub's settings: `RESOLVER_GITHUB_*`. `/setup` stores the App's in the vault."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from resolver.core.settings import ProviderSettings, web_address


class GitHubSettings(ProviderSettings):
    """GitHub (or GitHub Enterprise Server): the App, its webhook and signing in."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_GITHUB_")
    oauth_client = ("client_id", "client_secret")
    hints = MappingProxyType(
        {
            "api_url": "GitHub Enterprise Server: https://HOST/api/v3",
            "web_url": "GitHub Enterprise Server: https://HOST",
            "app_private_key_path": "the .pem file GitHub gave when the App's key was made",
        }
    )

    api_url: str = Field(default="https://api.github.com", description="GitHub REST API.")
    web_url: str = Field(
        default="https://github.com", description="GitHub's web address (sign-in pages)."
    )
    client_id: str | None = Field(
        default=None, description="The GitHub App's client id, for signing in to the web app."
    )
    client_secret: SecretStr | None = Field(
        default=None, description="The GitHub App's client secret."
    )
    app_id: str | None = Field(default=None, description="GitHub App id.")
    app_private_key: SecretStr | None = Field(
        default=None,
        description="GitHub App private key (PEM) itself; `/setup` stores it in the vault.",
    )
    app_private_key_path: Path | None = Field(
        default=None, description="PEM file of the GitHub App's private key."
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="GitHub webhook secret; unset turns /webhooks/github off."
    )

    _addresses = field_validator("api_url", "web_url")(web_address)

    def problems(self) -> tuple[tuple[str, str], ...]:
        key_file = self.app_private_key_path
        has_key = self.app_private_key is not None or (key_file is not None and key_file.is_file())
        if self.app_id and not has_key:
            return (("github app", "RESOLVER_GITHUB_APP_PRIVATE_KEY_PATH is not a file"),)
        return ()
