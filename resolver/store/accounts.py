"""Users and the provider identities linked to them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import Connection, String, bindparam, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload

from resolver.store import bound, holds, web_sessions
from resolver.store.models import Credential, Identity, Installation, Job, User, utcnow
from resolver.store.secrets import forget_tokens, token_state

# A link nobody signed in with and no job came from for this long is worth a look.
STALE_AFTER: Final = timedelta(days=90)
SELF_LINK: Final = "accounts:self_link"
"""The hold of people linking themselves (`self_link`), which may add a user."""


class AccountError(Exception):
    """A user or identity request that cannot be met (unknown user, taken identity…)."""


def _holder(session: Session, name: str, other_than: int | None = None) -> str | None:
    """An existing user name (of a user other than `other_than`) that `name` would clash
    with: the same whatever the case, as the database folds it for `users_name_folded`."""
    query = select(User.name).where(func.lower(User.name) == func.lower(name))
    if other_than is not None:
        query = query.where(User.id != other_than)
    return session.scalars(query.order_by(User.id)).first()


def add_user(session: Session, name: str, *, admin: bool = False) -> User:
    taken = _holder(session, name)
    if taken is not None:
        same = "" if taken == name else f" as {taken!r} (names are unique whatever their case)"
        raise AccountError(f"user {name!r} already exists{same}")
    user = User(name=name, is_admin=admin)
    session.add(user)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:  # added by someone else meanwhile
        raise AccountError(f"user {name!r} already exists") from None
    return user


def rename_user(session: Session, name: str, new_name: str) -> User:
    """Give a user another name, unique whatever its case (their own name in another case is
    allowed)."""
    user = get_user(session, name)
    taken = _holder(session, new_name, other_than=user.id)
    if taken is not None:
        raise AccountError(f"user {taken!r} already exists (names are unique whatever their case)")
    user.name = new_name
    session.flush()
    return user


def get_user(session: Session, name: str) -> User:
    """The user named exactly `name`."""
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise AccountError(f"no user named {name!r}; add one with `resolver users add {name}`")
    return user


def link_identity(
    session: Session, name: str, provider: str, external_id: str, login: str | None = None
) -> Identity:
    """Map a provider account to the user; re-linking the same account updates its login. The
    caller checks that `provider` is installed (`integrations.registry`)."""
    user = get_user(session, name)
    identity = session.scalar(
        select(Identity).where(Identity.provider == provider, Identity.external_id == external_id)
    )
    if identity is not None and identity.user_id != user.id:
        raise AccountError(f"{provider} account {external_id} is linked to another user")
    identity = identity or Identity(user_id=user.id, provider=provider, external_id=external_id)
    identity.login = login
    session.add(identity)
    try:
        session.flush()
    except IntegrityError:
        raise AccountError(f"{provider} account {external_id} is already linked") from None
    return identity


def find_identity(
    session: Session, provider: str, *, external_id: str | None = None, login: str | None = None
) -> Identity | None:
    """The identity for a sender, by external id first, then by login (case-insensitive)."""
    if external_id:
        found = session.scalar(
            select(Identity).where(
                Identity.provider == provider, Identity.external_id == external_id
            )
        )
        if found:
            return found
    if login:
        return session.scalar(
            select(Identity).where(
                Identity.provider == provider, Identity.login.ilike(login.replace("%", r"\%"))
            )
        )
    return None


def ensure_installation(
    session: Session, provider: str, external_id: str, name: str | None = None
) -> Installation:
    """The installation, added unless it is there. One added meanwhile by another writer (the
    same button pressed twice at once) is waited for and taken, never a unique-key error."""
    query = select(Installation).where(
        Installation.provider == provider, Installation.external_id == external_id
    )
    found = session.scalar(query)
    if found is None:
        dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
        added = dialect.insert(Installation).values(
            provider=provider, external_id=external_id, name=name
        )
        session.execute(added.on_conflict_do_nothing())
        found = session.scalars(query).one()
    return found


def identity_of(session: Session, user_id: int, provider: str) -> Identity | None:
    """The user's linked account on `provider`, if any."""
    return session.scalars(
        select(Identity).where(Identity.user_id == user_id, Identity.provider == provider)
    ).first()


def all_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.name)))


_USERS_BY_SENDER = {
    dialect: select(Identity.external_id, Identity.user_id).where(
        Identity.provider == bindparam("provider"),
        Identity.external_id.in_(select(bound.each("ids", String(), dialect).c.value)),
    )
    for dialect in bound.DIALECTS
}


def users_by_sender(
    conn: Connection, senders: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """The user linked to each (provider, external id) that has one, one query per provider."""
    found: dict[tuple[str, str], int] = {}
    pairs = set(senders)
    for provider in {provider for provider, _ in pairs}:
        ids = [external_id for p, external_id in pairs if p == provider]
        statement = _USERS_BY_SENDER[bound.dialect_of(conn)]
        rows = conn.execute(statement, {"provider": provider, "ids": ids})
        found.update({(provider, ext): user_id for ext, user_id in rows})
    return found


def user_by_login(conn: Connection, provider: str, login: str) -> int | None:
    """The user linked to `login` on `provider` (`find_identity`), inside the connection's
    transaction, which it leaves open."""
    with Session(bind=conn) as session:
        identity = find_identity(session, provider, login=login)
        return identity.user_id if identity else None


def self_link(session: Session, provider: str, external_id: str, login: str) -> User:
    """The user of a person who proved they hold this account: the one it is linked to, else a
    new user named after the login (made unique), linked to it. One at a time (a hold): two
    links of one account pressed at once each added the user, and the second was refused as
    'already exists' (PostgreSQL); two accounts of one login are named login and login-2."""
    holds.hold(session.connection(), [SELF_LINK])
    identity = find_identity(session, provider, external_id=external_id)
    if identity is not None:
        return identity.user
    name, n = login, 1
    while _holder(session, name) is not None:
        n += 1
        name = f"{login}-{n}"
    user = add_user(session, name)
    link_identity(session, name, provider, external_id, login)
    return user


def link_to_forge_user(
    session: Session,
    forge: tuple[str, str, str],
    provider: str,
    external_id: str,
    login: str | None,
) -> User:
    """Link a chat or tracker account to the user of the forge account (provider, external
    id, login) its holder signed in with: that account's user, else a new one as `self_link`
    makes. Refused when the account is linked to another user."""
    user = self_link(session, *forge)
    found = find_identity(session, provider, external_id=external_id)
    if found is not None and found.user_id != user.id:
        raise AccountError(f"{provider} account {external_id} is linked to another user")
    link_identity(session, user.name, provider, external_id, login)
    return user


def identities(session: Session, user_id: int) -> list[Identity]:
    query = select(Identity).where(Identity.user_id == user_id).order_by(Identity.provider)
    return list(session.scalars(query))


def unlink(session: Session, user_id: int, identity_id: int) -> Identity | None:
    """Remove one of the user's own linked identities, and their stored tokens of its provider;
    None when it is not theirs."""
    identity = _locked_identity(session, identity_id)
    if identity is None or identity.user_id != user_id:
        return None
    forget_tokens(session, identity.provider, user_id)
    session.delete(identity)
    session.flush()
    return identity


def _locked_identity(session: Session, identity_id: int) -> Identity | None:
    """The identity, with its user, read under a lock on its row (SQLite's write lock) until
    the transaction ends: of two removals at once (a double click), the second finds it gone
    rather than deleting it again and saying so too."""
    holds.hold(session.connection(), ())
    locked = select(Identity.id).where(Identity.id == identity_id).with_for_update()
    if session.scalar(locked) is None:
        return None
    # Its user is loaded with it: the caller may name whose link was removed.
    options = [joinedload(Identity.user)]
    return session.get(Identity, identity_id, options=options, populate_existing=True)


def signed_in(session: Session, provider: str, external_id: str) -> Identity | None:
    """Note that the person behind this identity signed in now; their identity, if linked."""
    identity = find_identity(session, provider, external_id=external_id)
    if identity is not None:
        identity.signed_in_at = utcnow()
    return identity


@dataclass(frozen=True)
class LinkRow:
    """A linked identity as the admin sees it: whose it is, when it was last used, how its
    owner's forge token stands, and whether it looks stale."""

    identity_id: int
    user: str
    provider: str
    account: str
    linked_at: datetime
    signed_in_at: datetime | None
    last_job_at: datetime | None
    token: str
    stale: bool


def links(session: Session, now: datetime | None = None) -> list[LinkRow]:
    """Every linked identity, by user and provider."""
    now = now or utcnow()
    last_jobs: dict[int | None, datetime] = {
        requester: when
        for requester, when in session.execute(
            select(Job.requester_id, func.max(Job.created_at))
            .where(Job.requester_id.is_not(None))
            .group_by(Job.requester_id)
        )
    }
    found = session.execute(
        select(Identity, User.name)
        .join(User, User.id == Identity.user_id)
        .order_by(User.name, Identity.provider, Identity.id)
    )
    tokens = newest_user_tokens(session)
    return [_link_row(i, name, last_jobs.get(i.user_id), tokens, now) for i, name in found]


def _link_row(
    identity: Identity,
    user: str,
    last_job: datetime | None,
    tokens: dict[tuple[int, str], Credential],
    now: datetime,
) -> LinkRow:
    token = token_state(tokens.get((identity.user_id, identity.provider)), now)
    used = max(t for t in (identity.created_at, identity.signed_in_at, last_job) if t is not None)
    return LinkRow(
        identity_id=identity.id,
        user=user,
        provider=identity.provider,
        account=f"@{identity.login} ({identity.external_id})"
        if identity.login
        else identity.external_id,
        linked_at=identity.created_at,
        signed_in_at=identity.signed_in_at,
        last_job_at=last_job,
        token=token,
        stale=token == "revoked" or now - used > STALE_AFTER,
    )


def newest_user_tokens(
    session: Session, user_id: int | None = None
) -> dict[tuple[int, str], Credential]:
    """Each user's newest stored token per provider (of one user, when given)."""
    query = select(Credential).where(Credential.user_id.is_not(None))
    if user_id is not None:
        query = query.where(Credential.user_id == user_id)
    newest: dict[tuple[int, str], Credential] = {}
    for credential in session.scalars(query.order_by(Credential.updated_at, Credential.id)):
        assert credential.user_id is not None
        newest[(credential.user_id, credential.provider)] = credential
    return newest


def revoke_link(session: Session, identity_id: int) -> Identity | None:
    """Remove any linked identity and its user's stored tokens of that provider (an admin's
    act), and end that person's web sessions; None when there is no such identity."""
    identity = _locked_identity(session, identity_id)
    if identity is None:
        return None
    web_sessions.end_everywhere(session, identity.provider, identity.external_id)
    forget_tokens(session, identity.provider, identity.user_id)
    session.delete(identity)
    session.flush()
    return identity
