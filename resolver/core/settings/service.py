"""The service's own settings, `Settings`: its groups of fields, and the providers' sections."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import PrivateAttr, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from resolver.core.settings.agent import BudgetFields, LlmFields, McpFields
from resolver.core.settings.errors import ConfigError
from resolver.core.settings.foundation import FoundationFields
from resolver.core.settings.jobs import IngressFields, JobFields, ScheduleFields
from resolver.core.settings.provider import ProviderSettings, S
from resolver.core.settings.sandbox import SandboxFields


class Settings(
    # Pydantic collects fields from the last base to the first: listed last to first, the
    # groups keep the fields' order (the order of docs/reference/settings.md).
    BudgetFields,
    McpFields,
    LlmFields,
    SandboxFields,
    IngressFields,
    ScheduleFields,
    JobFields,
    FoundationFields,
    BaseSettings,
):
    """Resolver's configuration. The settings reference (docs/reference/settings.md) is generated
    from these fields, and from each installed provider's section (`ProviderSettings`)."""

    model_config = SettingsConfigDict(
        env_prefix="RESOLVER_", env_file=".env", extra="ignore", frozen=True
    )
    _sections: Mapping[type[ProviderSettings], ProviderSettings] = PrivateAttr(default_factory=dict)

    @property
    def deployment(self) -> str:
        """RESOLVER_DEPLOYMENT_ID, or a stable id derived from the database (its password left
        out): two deployments on one engine have different databases."""
        if self.deployment_id:
            return self.deployment_id
        parts = urlsplit(self.database_url)
        if parts.scheme.startswith("sqlite"):
            where = str(Path(parts.path.removeprefix("/")).resolve())
        else:
            where = f"{parts.hostname}:{parts.port}{parts.path}"
        return hashlib.sha256(f"{parts.scheme}|{where}".encode()).hexdigest()[:12]

    def section(self, kind: type[S]) -> S:
        """The provider's section (`GitHubSettings.of(settings)` reads better). Read from the
        private dict itself: pydantic's `__getattr__` for a private attribute costs some 30
        times a field's read, and every webhook asks its provider's section."""
        private = self.__pydantic_private__ or {}
        found = private.get("_sections", {}).get(kind)
        if not isinstance(found, kind):
            raise ConfigError(
                f"{kind.__name__} is not part of these settings: a composition root composes "
                "each installed provider's settings (`get_settings.compose`)"
            )
        return found

    @property
    def sections(self) -> tuple[ProviderSettings, ...]:
        return tuple(self._sections.values())

    @property
    def kinds(self) -> tuple[type[ProviderSettings], ...]:
        """The provider settings classes these settings were composed with."""
        return tuple(self._sections)

    def with_section(self, section: ProviderSettings) -> Settings:
        """These settings with one provider's section replaced (tests, a preview)."""
        copy = self.model_copy()
        copy._sections = {**self._sections, type(section): section}
        return copy

    def names(self) -> tuple[str, ...]:
        """Every setting's flat name, the service's and its providers'."""
        return (*type(self).model_fields, *(n for s in self.sections for n in type(s).names()))

    def names_set(self) -> frozenset[str]:
        """The flat names of the settings given a value (by the environment, `.env` or the
        caller), not left at their defaults."""
        given = set(self.model_fields_set)
        for section in self.sections:
            given.update(
                n for n, f in type(section).names().items() if f in section.model_fields_set
            )
        return frozenset(given)

    def value(self, name: str) -> Any:
        """A setting by its flat name (`github_webhook_secret`), for generic code that lists
        settings by name (the vault, `/setup`'s origins, the secrets a job must not print)."""
        if name in type(self).model_fields:
            return getattr(self, name)
        for section in self.sections:
            field = type(section).names().get(name)
            if field is not None:
                return getattr(section, field)
        raise KeyError(name)

    def secrets(self) -> tuple[SecretStr, ...]:
        """Every secret setting that is set, the providers' included."""
        values = [getattr(self, n) for n in type(self).model_fields]
        values += [getattr(s, f) for s in self.sections for f in type(s).model_fields]
        return tuple(v for v in values if isinstance(v, SecretStr))

    def secret_values(self) -> tuple[str, ...]:
        """The text of every secret setting that is set, whole and, for a list of them
        (comma-separated, as `secret_keys`), item by item: what no log line or page shows."""
        values: list[str] = []
        for secret in self.secrets():
            text = secret.get_secret_value()
            values += [text, *text.split(",")] if "," in text else [text]
        return tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
