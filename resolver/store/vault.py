"""Secrets at rest: MultiFernet encryption and the credential store."""

from __future__ import annotations

from datetime import datetime

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from resolver.core.logs import register_secret
from resolver.store.models import Credential, StoredSetting, utcnow


class VaultError(Exception):
    """A stored secret could not be decrypted with any configured key."""


class Secret:
    """A plaintext secret that never shows itself in reprs, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('******')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class Vault:
    """Encrypts with the first key; decrypts with any of them."""

    def __init__(self, keys: list[str]) -> None:
        if not keys:
            raise VaultError("no encryption keys configured")
        self._fernet = MultiFernet([Fernet(k.encode()) for k in keys])

    def __repr__(self) -> str:
        return "Vault(<keys hidden>)"

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> Secret:
        try:
            value = self._fernet.decrypt(token.encode()).decode()
        except InvalidToken:
            raise VaultError("a stored secret matches none of RESOLVER_SECRET_KEYS") from None
        # Once a secret is in memory it may reach a log line by accident; mask it there. Among
        # the most recent (a person's token, a stored credential): each sign-in's new token is
        # one more. Settings read from the vault are masked for good where they are read.
        register_secret(value, passing=True)
        return Secret(value)

    def rotate(self, token: str) -> str:
        """Re-encrypt a token under the first key."""
        try:
            return self._fernet.rotate(token.encode()).decode()
        except InvalidToken:
            raise VaultError("a stored secret matches none of RESOLVER_SECRET_KEYS") from None


def generate_key() -> str:
    return Fernet.generate_key().decode()


def store_credential(
    session: Session,
    vault: Vault,
    *,
    provider: str,
    kind: str,
    secret: str,
    user_id: int | None = None,
    installation_id: int | None = None,
    scope: str | None = None,
    expires_at: datetime | None = None,
    refresh: str | None = None,
    origin: str | None = None,
) -> Credential:
    """Insert or replace the owner's credential of this provider and kind (a new one is not
    revoked, whatever the one it replaces was). One statement on the owner's unique key: two
    stores at once leave one row, the later one's, and neither fails."""
    values = {
        "ciphertext": vault.encrypt(secret),
        "refresh_ciphertext": vault.encrypt(refresh) if refresh else None,
        "scope": scope,
        "origin": origin,
        "expires_at": expires_at,
        "revoked_at": None,
        "updated_at": utcnow(),
    }
    owner = "user_id" if user_id is not None else "installation_id"
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(Credential).values(
        provider=provider, kind=kind, user_id=user_id, installation_id=installation_id, **values
    )
    stored = session.execute(
        statement.on_conflict_do_update(
            index_elements=[owner, "provider", "kind"], set_=values
        ).returning(Credential.id)
    ).scalar_one()
    credential = session.get(Credential, stored, populate_existing=True)
    assert credential is not None
    return credential


def rotate_all(session: Session, vault: Vault) -> int:
    """Re-encrypt every stored secret under the newest key; returns how many were rewritten."""
    count = 0
    for cred in session.scalars(select(Credential)):
        cred.ciphertext = vault.rotate(cred.ciphertext)
        if cred.refresh_ciphertext:
            cred.refresh_ciphertext = vault.rotate(cred.refresh_ciphertext)
        count += 1
    for stored in session.scalars(select(StoredSetting)):
        stored.ciphertext = vault.rotate(stored.ciphertext)
        count += 1
    session.flush()
    return count
