"""Where set-up keeps what it creates (`contract.setup.SetupStore`), over the vault: settings
in `store.configured`, an install's bot token as its installation's credential."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from resolver.contract.setup import KeptToken
from resolver.core.settings import Settings
from resolver.onboarding.hooks import check_not_in_environment, store
from resolver.onboarding.status import env_set
from resolver.store.accounts import ensure_installation
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential


class VaultStore:
    """A `SetupStore` for one command or request; every call is its own transaction."""

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
            owner = ensure_installation(session, token.provider, token.installation)
            store_credential(
                session,
                Vault(self.settings.fernet_keys),
                provider=token.provider,
                kind=token.kind,
                secret=token.secret,
                installation_id=owner.id,
                scope=token.scope,
                expires_at=token.expires_at,
                refresh=token.refresh,
            )
