"""Settings: every knob is a `RESOLVER_*` environment variable or a line in `.env`."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Final, Self, TypeVar
from urllib.parse import urlsplit

from pydantic import PrivateAttr, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from resolver.core.settings.agent import BudgetFields, LlmFields, McpFields
from resolver.core.settings.foundation import VAR_DIR as VAR_DIR
from resolver.core.settings.foundation import FoundationFields
from resolver.core.settings.foundation import admin_id as admin_id
from resolver.core.settings.jobs import IngressFields, JobFields, ScheduleFields
from resolver.core.settings.sandbox import SandboxFields


class ConfigError(Exception):
    """A setting is missing or invalid; the message is one line that says how to fix it.
    `variable` names it (`RESOLVER_…`) and `problem` says what is wrong, without the hint."""

    def __init__(self, message: str, variable: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.variable, self.problem = variable, problem


# A hint per setting, printed when that setting is missing or invalid.
HINTS: dict[str, str] = {
    "secret_keys": "generate one with `resolver keys generate` and put it in .env",
    "database_url": "use sqlite:///var/resolver.db or postgresql+psycopg://user:pass@host/db",
    "redis_url": "use redis://host:6379/0",
    "admin_token": "set a long random string; it guards the JSON API",
    "admins": "name each forge account by its numeric id, as forge:id:NUMBER (the forge as in its "
    "webhook path), or make a Resolver user an admin with `resolver users add --admin`",
}


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


Sections = Callable[[], Iterable[type[ProviderSettings]]]
"""The installed providers' settings classes (`integrations.registry.settings_classes`)."""


def web_address(value: str | None) -> str | None:
    """A provider's address, checked: http(s) and a host (a validator for provider settings)."""
    if value is None:
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// address with a host")
    return value


def _described(error: ValidationError, kind: type[BaseSettings] = Settings) -> ConfigError:
    """One line: the variable, what is wrong with it, and the hint."""
    first = error.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else "?"
    problem = "is missing" if first["type"] == "missing" else f"is invalid: {first['msg']}"
    hint = "see the settings table in docs/reference/settings.md"
    if issubclass(kind, ProviderSettings):
        known = {kind.variable(f): f for f in kind.model_fields}
        name = next((v for v, f in known.items() if field.upper() in (f.upper(), v)), field)
        hint = kind.hints.get(known.get(name, ""), hint)
    else:
        name, hint = f"RESOLVER_{field.upper()}", HINTS.get(field, hint)
    return ConfigError(f"{name} {problem} ({hint})", name, problem)


def compose(
    kinds: Iterable[type[ProviderSettings]],
    values: Mapping[str, Any] | None = None,
    *,
    env_file: bool = True,
) -> Settings:
    """The service's settings with a section per provider class in `kinds`, each read from the
    environment (and `.env` unless `env_file` is false), with `values` (by flat name) over
    them. ConfigError, one line naming the variable, when one is missing or invalid."""
    rest = dict(values or {})
    files: dict[str, Any] = {} if env_file else {"_env_file": None}
    try:
        settings = Settings(**files, **rest)
    except ValidationError as error:
        raise _described(error) from None
    sections: dict[type[ProviderSettings], ProviderSettings] = {}
    for kind in kinds:
        names = kind.names()
        mine = {names[n]: rest[n] for n in rest if n in names}
        try:
            sections[kind] = kind(**files, **mine)
        except ValidationError as error:
            raise _described(error, kind) from None
    settings._sections = sections
    return settings


def load_settings() -> Settings:
    """Read the settings, with the installed providers' sections (`get_settings.compose`), or
    raise ConfigError with one line naming the bad setting."""
    return compose(get_settings.kinds())


Overlay = Callable[[Settings], Settings]

OVERLAY_SECONDS: Final = 30.0
"""How long a process trusts the settings it read from the vault before reading them again."""


class _SettingsCache:
    """The process-wide settings: read once from the environment, with the providers' sections
    a composition root composed (`compose`), and, once a composition root has installed an
    overlay (the vault's stored settings, `store.configured`), with the overlay applied and
    re-applied every OVERLAY_SECONDS. `cache_clear()` forgets both readings."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sections: Sections = tuple
        self._overlay: Overlay | None = None
        self._base: Settings | None = None
        self._settings: Settings | None = None
        self._read_at = 0.0

    def __call__(self) -> Settings:
        found, overlay = self._settings, self._overlay
        if found is not None and (
            overlay is None or time.monotonic() - self._read_at < OVERLAY_SECONDS
        ):
            return found
        with self._lock:
            if self._base is None:
                self._base = load_settings()
            base = self._base
            settings = base if self._overlay is None else self._overlay(base)
            self._settings, self._read_at = settings, time.monotonic()
            return settings

    def install(self, overlay: Overlay) -> None:
        with self._lock:
            self._overlay, self._settings = overlay, None

    def compose(self, sections: Sections) -> None:
        """Each later reading carries a section per provider class that `sections()` names
        (asked at each reading): the composition roots pass the registry's
        `settings_classes`."""
        with self._lock:
            self._sections, self._base = sections, None
            self._settings = None

    def kinds(self) -> tuple[type[ProviderSettings], ...]:
        return tuple(self._sections())

    def cache_clear(self) -> None:
        with self._lock:
            self._base = self._settings = None


get_settings: Final = _SettingsCache()
"""The process-wide settings: `get_settings()`."""
