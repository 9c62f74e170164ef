"""Azure DevOps settings: `RESOLVER_AZUREDEVOPS_*` (Azure DevOps Services, or a collection of
Azure DevOps Server: the same settings, `url` naming the collection)."""

from __future__ import annotations

from types import MappingProxyType
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from resolver.contract.inbound import secret_value
from resolver.core.settings import ProviderSettings, web_address

CLOUD_HOST = "dev.azure.com"


class AzureDevOpsSettings(ProviderSettings):
    """An organisation (or a server's collection): the bot's token, the service hooks'
    credentials, and signing in with Microsoft Entra ID."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_AZUREDEVOPS_")
    oauth_client = ("client_id", "client_secret")
    hints = MappingProxyType(
        {"url": "the organisation's address, e.g. https://dev.azure.com/fabrikam"}
    )

    url: str | None = Field(
        default=None,
        description="The organisation's address (https://dev.azure.com/ORG), or an Azure DevOps "
        "Server collection's (https://server/tfs/DefaultCollection).",
    )
    identity_url: str | None = Field(
        default=None,
        description="Where identities are read; by default https://vssps.dev.azure.com/ORG for "
        "an organisation and the collection's own address for a server.",
    )
    token: SecretStr | None = Field(
        default=None,
        description="The bot's personal access token (Code: read & write; Work items: read & "
        "write; Identity: read; Security: manage), or an Entra service principal's token.",
    )
    webhook_user: str = Field(
        default="resolver", description="The user name the service hooks send (basic auth)."
    )
    webhook_password: SecretStr | None = Field(
        default=None,
        description="The password the service hooks send (basic auth): a generated secret.",
    )
    webhook_header_secret: SecretStr | None = Field(
        default=None,
        description="The value of the `X-Resolver-Secret` header the service hooks send.",
    )
    tenant: str | None = Field(
        default=None, description="The Microsoft Entra tenant (id or domain) people sign in with."
    )
    client_id: str | None = Field(
        default=None, description="An Entra app registration's client id, for signing in."
    )
    client_secret: SecretStr | None = Field(
        default=None, description="That app registration's client secret."
    )
    login_url: str = Field(
        default="https://login.microsoftonline.com",
        description="The Microsoft Entra sign-in authority.",
    )

    profile_url: str = Field(
        default="https://app.vssps.visualstudio.com",
        description="Where a signed-in person's Azure DevOps profile is read.",
    )

    _address = field_validator("url", "identity_url", "login_url", "profile_url")(web_address)

    @property
    def sign_in_enabled(self) -> bool:
        return bool(self.tenant and self.client_id) and secret_value(self.client_secret) is not None

    @property
    def webhook_enabled(self) -> bool:
        """On only with an organisation and both secrets: a hook never runs unauthenticated."""
        return (
            bool(self.url)
            and secret_value(self.webhook_password) is not None
            and secret_value(self.webhook_header_secret) is not None
        )

    @property
    def identities(self) -> str | None:
        """Where `_apis/identities` lives: vssps for an organisation, the collection for a
        server."""
        if self.identity_url or not self.url:
            return self.identity_url
        parts = urlsplit(self.url)
        if parts.hostname == CLOUD_HOST:
            return parts._replace(netloc=f"vssps.{CLOUD_HOST}").geturl()
        return self.url

    def problems(self) -> tuple[tuple[str, str], ...]:
        if not self.url and (self.token or self.webhook_password or self.client_id):
            return (
                ("azuredevops url", "RESOLVER_AZUREDEVOPS_URL is not set: name the organisation"),
            )
        return ()
