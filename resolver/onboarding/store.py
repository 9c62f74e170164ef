"""Where set-up keeps what it creates (`contract.setup.SetupStore`), over the vault: settings
in `store.configured`, an install's bot token as its installation's credential. The one module
of onboarding that opens transactions: set-up's other modules ask it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from integrations import registry
from resolver.contract.setup import KeptSetting, KeptToken, SetupError, SetupStore
from resolver.core.settings import Settings, load_settings
from resolver.onboarding.status import env_set
from resolver.store import configured, holds
from resolver.store.accounts import ensure_installation
from resolver.store.db import session_scope
from resolver.store.repo_defaults import known_repositories
from resolver.store.secrets import installation_token_at
from resolver.store.vault import Vault, store_credential

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def check_not_in_environment(names: tuple[str, ...]) -> None:
    """A setting the environment (or .env) sets wins over the vault: storing it would change
    nothing, so nothing is done."""
    from_env = sorted(n for n in names if n in load_settings().names_set())
    if from_env:
        variables = ", ".join(f"RESOLVER_{n.upper()}" for n in from_env)
        raise SetupError(f"{variables} is set in the environment and wins over the vault: unset it")


def store(settings: Settings, values: Mapping[str, str]) -> None:
    """Keep `values` in the vault, encrypted; this process reads them at once."""
    with session_scope() as session:
        configured.save(session, settings, values)
    configured.changed()


def forge_repositories() -> dict[str, tuple[str, ...]]:
    """The repositories each installed forge is known to have (for its preflight)."""
    with session_scope() as session:
        forges = registry.forge_names()
        return {forge: tuple(known_repositories(session, forge)) for forge in forges}


class VaultStore:
    """A `SetupStore` for one command or request; every call is its own transaction, but those
    of a `held` store share one."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def env_set(self, names: Iterable[str]) -> tuple[str, ...]:
        return env_set(names)

    def check_not_in_environment(self, names: Iterable[str]) -> None:
        check_not_in_environment(tuple(names))

    def save(self, values: Mapping[str, str]) -> None:
        store(self.settings, values)

    def keep_token(self, token: KeptToken) -> None:
        with session_scope() as session:
            _keep_token(session, self.settings, token)

    def kept(self, name: str) -> KeptSetting | None:
        with session_scope() as session:
            return _kept(session, self.settings, name)

    def token_kept_at(self, provider: str, kind: str) -> datetime | None:
        with session_scope() as session:
            return installation_token_at(session, provider, kind)

    @contextmanager
    def held(self, name: str) -> Iterator[SetupStore]:
        # On SQLite the hold is the database's write lock, kept while the provider answers
        # (within its timeout): other writers wait or answer 503, as setup is rare and short.
        with session_scope() as session:
            holds.hold(session.connection(), [f"setup:{name}"])
            yield _HeldStore(self.settings, session)
        configured.changed()


class _HeldStore(VaultStore):
    """`VaultStore.held`'s store: its calls run in `session`, which holds the name."""

    def __init__(self, settings: Settings, session: Session) -> None:
        super().__init__(settings)
        self.session = session

    def save(self, values: Mapping[str, str]) -> None:
        configured.save(self.session, self.settings, values)

    def keep_token(self, token: KeptToken) -> None:
        _keep_token(self.session, self.settings, token)

    def kept(self, name: str) -> KeptSetting | None:
        return _kept(self.session, self.settings, name)

    def token_kept_at(self, provider: str, kind: str) -> datetime | None:
        return installation_token_at(self.session, provider, kind)

    @contextmanager
    def held(self, name: str) -> Iterator[SetupStore]:
        holds.hold(self.session.connection(), [f"setup:{name}"])
        yield self


def _kept(session: Session, settings: Settings, name: str) -> KeptSetting | None:
    found = configured.read(session, settings, name)
    return KeptSetting(*found) if found is not None else None


def _keep_token(session: Session, settings: Settings, token: KeptToken) -> None:
    owner = ensure_installation(session, token.provider, token.installation)
    store_credential(
        session,
        Vault(settings.fernet_keys),
        provider=token.provider,
        kind=token.kind,
        secret=token.secret,
        installation_id=owner.id,
        scope=token.scope,
        expires_at=token.expires_at,
        refresh=token.refresh,
    )
