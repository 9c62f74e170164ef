"""Stored tokens, looked up for a provider by their owner: a user or an installation, and the
life of a person's forge OAuth token: stored when they sign in or link, renewed before it
expires (keeping the rotated refresh token), and marked revoked when the forge refuses it.

`resolver tokens set --provider P --user NAME` or `--installation ID` stores tokens (encrypted).
A token, once decrypted, is masked in this process's log lines.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from resolver.contract.signin import ForgeUnreachableError, IssuedToken, RefreshRefusedError
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.db import session_scope
from resolver.store.models import Credential, Installation, utcnow
from resolver.store.vault import Vault, store_credential

OAUTH: Final = "oauth"
# A token this close to its expiry is renewed before it is handed out.
REFRESH_MARGIN: Final = timedelta(minutes=5)

Refresher = Callable[[str], IssuedToken]
Clock = Callable[[], datetime]


class TokenRevokedError(Exception):
    """The forge refused the user's stored token: only signing in again brings a new one."""


def stored_token(
    provider: str,
    *,
    user_id: int | None = None,
    installation: str | None = None,
    settings: Settings,
    refresh: Refresher | None = None,
    clock: Clock | None = None,
) -> str | None:
    """The newest usable token of `provider` owned by the user or by the installation whose
    external id is `installation` (a Slack team, a Jira site, a GitLab instance, …). With
    `refresh`, a user's token that expires within REFRESH_MARGIN is renewed first. Raises
    TokenRevokedError when the user's only token of the provider was refused."""
    if user_id is None and installation is None:
        return None
    vault = Vault(settings.fernet_keys)
    clock = clock or utcnow
    now = clock()
    with session_scope() as session:
        found = _newest(session, provider, user_id, installation, now, renewable=bool(refresh))
        if found is None and user_id is not None and _refused(session, provider, user_id):
            raise TokenRevokedError(f"the {provider} token of user {user_id} was revoked")
        state = None if found is None else (found.id, found.ciphertext, _due(found, now))
    if state is None:
        return None
    credential_id, ciphertext, due = state
    if due and refresh is not None:
        return _renew(credential_id, vault, refresh, clock)
    return _open(vault, ciphertext)


def _newest(
    session: Session,
    provider: str,
    user_id: int | None,
    installation: str | None,
    now: datetime,
    *,
    renewable: bool,
) -> Credential | None:
    query = select(Credential).where(
        Credential.provider == provider, Credential.revoked_at.is_(None)
    )
    if user_id is not None:
        query = query.where(Credential.user_id == user_id)
    else:
        query = query.join(Installation, Installation.id == Credential.installation_id).where(
            Installation.provider == provider, Installation.external_id == installation
        )
    live = [Credential.expires_at.is_(None), Credential.expires_at > now]
    if renewable:  # an expired token whose refresh token may still renew it
        live.append(Credential.refresh_ciphertext.is_not(None))
    query = query.where(or_(*live))
    return session.scalars(
        query.order_by(Credential.updated_at.desc(), Credential.id.desc())
    ).first()


def _refused(session: Session, provider: str, user_id: int) -> bool:
    query = select(Credential.id).where(
        Credential.provider == provider,
        Credential.user_id == user_id,
        Credential.revoked_at.is_not(None),
    )
    return session.scalars(query).first() is not None


def _due(credential: Credential, now: datetime) -> bool:
    """Whether the token should be renewed before use: it has a refresh token and expires soon."""
    expires = credential.expires_at
    renewable = credential.refresh_ciphertext is not None
    return renewable and expires is not None and expires - REFRESH_MARGIN <= now


def _open(vault: Vault, ciphertext: str) -> str:
    token = vault.decrypt(ciphertext).reveal()
    register_secret(token, passing=True)  # masked in this process's log lines from now on
    return token


def _renew(credential_id: int, vault: Vault, refresh: Refresher, clock: Clock) -> str:
    """Trade the refresh token for new tokens, holding the credential's lock meanwhile: a second
    caller waits, then reads the rotated token rather than spending the old refresh token."""
    refused = False
    with session_scope() as session:
        # Writing first takes the row's lock (PostgreSQL) or the database's write lock
        # (SQLite) before anything is read, so the read below is never a stale snapshot.
        session.execute(
            update(Credential)
            .where(Credential.id == credential_id)
            .values(updated_at=Credential.updated_at)
        )
        credential = session.get(Credential, credential_id, populate_existing=True)
        if credential is None or credential.revoked_at is not None:
            refused = True
        elif not _due(credential, clock()) or credential.refresh_ciphertext is None:
            return _open(vault, credential.ciphertext)
        else:
            now = clock()
            try:
                issued = refresh(_open(vault, credential.refresh_ciphertext))
            except RefreshRefusedError:
                credential.revoked_at = now
                refused = True
            except ForgeUnreachableError:
                if credential.expires_at is not None and credential.expires_at > now:
                    return _open(vault, credential.ciphertext)  # still good for a few minutes
                raise
            else:
                _keep(credential, vault, issued, now)
                return issued.access_token
    assert refused
    raise TokenRevokedError(f"the token of credential {credential_id} was revoked")


def _keep(credential: Credential, vault: Vault, issued: IssuedToken, now: datetime) -> None:
    register_secret(issued.access_token, passing=True)
    credential.ciphertext = vault.encrypt(issued.access_token)
    if issued.refresh_token:
        register_secret(issued.refresh_token, passing=True)
        credential.refresh_ciphertext = vault.encrypt(issued.refresh_token)
    credential.expires_at = _expiry(issued, now)
    credential.revoked_at = None


def _expiry(issued: IssuedToken, now: datetime) -> datetime | None:
    return None if issued.expires_in is None else now + timedelta(seconds=issued.expires_in)


def save_oauth_token(
    session: Session,
    vault: Vault,
    provider: str,
    user_id: int,
    issued: IssuedToken,
    now: datetime | None = None,
) -> Credential:
    """The user's forge token as they just signed in with it: it replaces any earlier one of
    theirs for the provider (a revoked one too)."""
    register_secret(issued.access_token, passing=True)
    if issued.refresh_token:
        register_secret(issued.refresh_token, passing=True)
    return store_credential(
        session,
        vault,
        provider=provider,
        kind=OAUTH,
        secret=issued.access_token,
        user_id=user_id,
        expires_at=_expiry(issued, now or utcnow()),
        refresh=issued.refresh_token,
    )


def refuse_token(provider: str, user_id: int, token: str, settings: Settings) -> None:
    """The forge answered 401 to `token`: mark the user's stored token revoked, unless it has
    been replaced since (a refresh or a new sign-in in between)."""
    vault = Vault(settings.fernet_keys)
    query = select(Credential).where(
        Credential.provider == provider,
        Credential.user_id == user_id,
        Credential.revoked_at.is_(None),
    )
    with session_scope() as session:
        for credential in session.scalars(query):
            if vault.decrypt(credential.ciphertext).reveal() == token:
                credential.revoked_at = utcnow()


def forget_tokens(session: Session, provider: str, user_id: int) -> int:
    """Delete the user's stored tokens of `provider`; how many there were."""
    result = session.execute(
        delete(Credential).where(Credential.provider == provider, Credential.user_id == user_id)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def token_state(credential: Credential | None, now: datetime) -> str:
    """How a user's stored forge token stands, in a word a page can show."""
    if credential is None:
        return "none"
    if credential.revoked_at is not None:
        return "revoked"
    if credential.refresh_ciphertext is not None or credential.expires_at is None:
        return "present"
    return "expired" if credential.expires_at <= now else "expiring"


def installation_token_at(session: Session, provider: str, kind: str) -> datetime | None:
    """When a token of `kind` was last stored for one of `provider`'s installations."""
    query = select(func.max(Credential.updated_at)).where(
        Credential.provider == provider,
        Credential.kind == kind,
        Credential.installation_id.is_not(None),
    )
    return session.scalar(query)


def token_installations(provider: str) -> list[str]:
    """The external ids of `provider`'s installations that hold a token (Slack teams, Jira
    sites, Linear workspaces), for the preflight to check each one."""
    query = (
        select(Installation.external_id)
        .join(Credential, Credential.installation_id == Installation.id)
        .where(Installation.provider == provider, Credential.provider == provider)
        .distinct()
        .order_by(Installation.external_id)
    )
    with session_scope() as session:
        return list(session.scalars(query))
