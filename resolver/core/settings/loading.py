"""Reading the settings: composed with the providers' sections, described in one line when
one is wrong, and cached for the process (`get_settings`), with the vault's overlay."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from pydantic import ValidationError
from pydantic_settings import BaseSettings

from resolver.core.settings.errors import ConfigError
from resolver.core.settings.provider import ProviderSettings
from resolver.core.settings.service import Settings

# A hint per setting, printed when that setting is missing or invalid.
HINTS: dict[str, str] = {
    "secret_keys": "generate one with `resolver keys generate` and put it in .env",
    "database_url": "use sqlite:///var/resolver.db or postgresql+psycopg://user:pass@host/db",
    "redis_url": "use redis://host:6379/0",
    "admin_token": "set a long random string; it guards the JSON API",
    "admins": "name each forge account by its numeric id, as forge:id:NUMBER (the forge as in its "
    "webhook path), or make a Resolver user an admin with `resolver users add --admin`",
}


Sections = Callable[[], Iterable[type[ProviderSettings]]]
"""The installed providers' settings classes (`integrations.registry.settings_classes`)."""


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
        self._mask: Callable[[str], None] | None = None

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
            if self._mask is not None:
                for value in settings.secret_values():
                    self._mask(value)
            self._settings, self._read_at = settings, time.monotonic()
            return settings

    def mask_with(self, mask: Callable[[str], None]) -> None:
        """Hand each secret value of each settings object read from now on to `mask` (the
        logs' `register_secret`), once, before anything can print it: the composition roots
        do, so a process that runs no job (the web, `resolver doctor`) masks them as well."""
        with self._lock:
            self._mask, self._settings = mask, None

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
