"""A provider's own settings: the section of the service's settings read from its folder's class."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar, Self, TypeVar
from urllib.parse import urlsplit

from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:
    from resolver.core.settings.service import Settings


class ProviderSettings(BaseSettings):
    """A provider's own settings, in its folder (`integrations/<name>/settings.py`), with the
    prefix `RESOLVER_<NAME>_`. The registry names each installed provider's class
    (`Provider.settings`); a composition root hands them to `get_settings.compose`, and the
    service's settings then carry one frozen section per provider, read from the same
    environment and `.env` and overlaid by the vault like the rest: `GitHubSettings.of(settings)`.

    Outside its section a setting is known by its flat name, the variable without `RESOLVER_`
    in lower case (`github_webhook_secret`): the vault stores it under that name, and a field
    that keeps an older variable name (`validation_alias`) is known by that one."""

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", frozen=True, populate_by_name=True
    )

    hints: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """A hint per field, printed when that setting is invalid."""
    oauth_client: ClassVar[tuple[str, ...]] = ()
    """The fields, client id then secret, of the OAuth app people sign in or prove an account
    with on this provider (what `resolver doctor` names when it is not set)."""

    @classmethod
    def of(cls, settings: Settings) -> Self:
        """This provider's section of the service's settings."""
        return settings.section(cls)

    @classmethod
    def variable(cls, field: str) -> str:
        """The environment variable of a field: `RESOLVER_GITHUB_WEBHOOK_SECRET`."""
        alias = cls.model_fields[field].validation_alias
        if isinstance(alias, str):
            return alias.upper()
        return f"{cls.model_config.get('env_prefix', '')}{field}".upper()

    @classmethod
    def names(cls) -> dict[str, str]:
        """Flat name → field: `{"github_webhook_secret": "webhook_secret", …}`."""
        return {cls.variable(f).lower().removeprefix("resolver_"): f for f in cls.model_fields}

    @classmethod
    def oauth_variables(cls) -> tuple[str, ...]:
        """`oauth_client`'s variables: `RESOLVER_GITHUB_CLIENT_ID`, …"""
        return tuple(cls.variable(field) for field in cls.oauth_client)

    def problems(self) -> tuple[tuple[str, str], ...]:
        """What is wrong with these settings together, found without the network, as (check
        name, what to fix) pairs for `resolver doctor`: a key file that is not there, say."""
        return ()


S = TypeVar("S", bound=ProviderSettings)


def web_address(value: str | None) -> str | None:
    """A provider's address, checked: http(s) and a host (a validator for provider settings)."""
    if value is None:
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// address with a host")
    return value
