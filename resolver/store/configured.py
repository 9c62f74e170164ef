"""Settings kept in the vault. `/setup` and `resolver setup` store what they create (a GitHub
App's id, key and secrets, webhook secrets, OAuth clients) here rather than in a file; every
process reads them over its environment, and the environment wins for a setting it sets.

A composition root (`app`, `tasks`, `cli`) calls `install()`; `core.settings.get_settings` then
re-reads the stored values every `OVERLAY_SECONDS`, and at once in the process that saved them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from sqlalchemy import delete, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from resolver.core.logs import log, register_secret
from resolver.core.settings import ConfigError, Settings, compose, get_settings
from resolver.store.db import engine_for
from resolver.store.models import StoredSetting, utcnow
from resolver.store.vault import Vault, VaultError

logger = logging.getLogger(__name__)

BOOTSTRAP: Final = frozenset({"database_url", "redis_url", "secret_keys", "deployment_id"})
"""What the vault itself needs to be found and opened: only ever from the environment."""


class StoredSettingError(Exception):
    """A value that cannot be stored: an unknown setting, or one the vault cannot hold."""


def storable(settings: Settings, name: str) -> bool:
    """A setting of the service or of a provider composed into `settings`, by its flat name
    (`github_webhook_secret`), and not one the vault needs to be opened."""
    return name in settings.names() and name not in BOOTSTRAP


def save(session: Session, settings: Settings, values: Mapping[str, str]) -> None:
    """Store (or replace) each value, encrypted. The caller commits, then calls `changed()`."""
    for name in values:
        if not storable(settings, name):
            raise StoredSettingError(f"{name} cannot be kept in the vault")
    _check(settings, values)
    vault = Vault(settings.fernet_keys)
    for name, value in values.items():
        if _secret(settings, name):
            register_secret(value)
        row = session.get(StoredSetting, name)
        if row is None:
            session.add(StoredSetting(name=name, ciphertext=vault.encrypt(value)))
        else:
            row.ciphertext, row.updated_at = vault.encrypt(value), utcnow()


def read(session: Session, settings: Settings, name: str) -> tuple[str, datetime] | None:
    """The vault's value of setting `name` and when it was stored, or None."""
    row = session.get(StoredSetting, name)
    if row is None:
        return None
    return Vault(settings.fernet_keys).decrypt(row.ciphertext).reveal(), row.updated_at


def forget(session: Session, names: Iterable[str]) -> None:
    session.execute(delete(StoredSetting).where(StoredSetting.name.in_(list(names))))


def stored_names(session: Session) -> dict[str, datetime]:
    """Which settings the vault holds, and when each was last stored (never their values)."""
    rows = session.execute(select(StoredSetting.name, StoredSetting.updated_at)).all()
    return {name: at for name, at in rows}


def changed() -> None:
    """This process reads the stored settings again on its next `get_settings()`."""
    get_settings.cache_clear()


def _secret(settings: Settings, name: str) -> bool:
    field = Settings.model_fields.get(name)
    for kind in settings.kinds:
        if name in kind.names():
            field = kind.model_fields[kind.names()[name]]
    return field is not None and "SecretStr" in str(field.annotation)


def _check(settings: Settings, values: Mapping[str, str]) -> None:
    try:
        _settings(settings, _env_free(settings, values))
    except ConfigError as error:
        where = error.variable.lower().removeprefix("resolver_")
        raise StoredSettingError(f"{where} {error.problem}") from None


def _settings(base: Settings, values: Mapping[str, Any]) -> Settings:
    """The environment's settings with `values` over them (init values outrank the sources),
    composed with the same providers' sections as `base`."""
    return compose(base.kinds, values)


def _env_free(settings: Settings, values: Mapping[str, str]) -> dict[str, str]:
    given = settings.names_set()
    return {n: v for n, v in values.items() if n not in given}


class _Overlay:
    """Reads the stored settings for `get_settings`; keeps the last good ones if the database
    does not answer, so a blip does not turn webhook secrets off."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, dict[str, str]] = {}  # per database URL

    def __call__(self, base: Settings) -> Settings:
        stored = self._read(base)
        wanted = {n: v for n, v in _env_free(base, stored).items() if storable(base, n)}
        if not wanted:
            return base
        try:
            return _settings(base, wanted)
        except ConfigError as error:
            log(logger, logging.ERROR, "settings.stored_invalid", error=str(error))
            return base

    def _read(self, base: Settings) -> dict[str, str]:
        try:
            with Session(engine_for(base.database_url)) as session:
                rows = session.execute(select(StoredSetting.name, StoredSetting.ciphertext)).all()
        except SQLAlchemyError as error:  # not migrated yet, or the database is away
            log(logger, logging.DEBUG, "settings.stored_unread", error=type(error).__name__)
            return self._last.get(base.database_url, {})
        vault = Vault(base.fernet_keys)
        values: dict[str, str] = {}
        for name, ciphertext in rows:
            try:
                values[name] = vault.decrypt(ciphertext).reveal()
            except VaultError:
                log(logger, logging.ERROR, "settings.stored_undecryptable", name=name)
                continue
            if storable(base, name) and _secret(base, name):
                register_secret(values[name])
        with self._lock:
            self._last[base.database_url] = values
        return values


OVERLAY: Final = _Overlay()


def install() -> None:
    """Every later `get_settings()` in this process includes the stored settings."""
    get_settings.install(OVERLAY)
