"""Sixth's settings: `RESOLVER_SIXTH_*`, composed into the service's settings by its registry
line like every provider's (compare `integrations/linear/settings.py`)."""

from __future__ import annotations

from types import MappingProxyType

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from resolver.core.settings import ProviderSettings


class SixthSettings(ProviderSettings):
    """Sixth: the secret its deliveries are signed with."""

    model_config = SettingsConfigDict(env_prefix="RESOLVER_SIXTH_")
    hints = MappingProxyType({"signing_secret": "Sixth's app page shows it"})

    signing_secret: SecretStr | None = Field(
        default=None, description="Sixth signing secret; unset turns /webhooks/sixth off."
    )
