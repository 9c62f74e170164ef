"""Signed-in web sessions, kept on the server: the browser's signed cookie carries a random key
and is good only while its row lives. A session ends at its absolute lifetime (counted from
sign-in), after an idle spell, or when deleted: sign out, sign out everywhere, an admin's
revoke of the person's link, or the forge refusing their token. Only each key's SHA-256 is
stored, so a read of this table gives no live cookie."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.orm import Session

from resolver.store.models import Identity, WebSession

TOUCH: Final = timedelta(minutes=1)
"""`seen_at` is written at most this often (or twice per idle timeout, when that is shorter),
so a busy session costs one write a minute, not one a request."""


@dataclass(frozen=True)
class Lifetimes:
    absolute: timedelta
    """From sign-in; neither use nor a rotated key extends it."""
    idle: timedelta
    """From the last request seen."""

    @property
    def touch(self) -> timedelta:
        return min(TOUCH, self.idle / 2)


@dataclass(frozen=True)
class Live:
    """A session that is still good."""

    id: int
    provider: str
    external_id: str
    checked_at: datetime
    """When the forge last accepted the session's token."""


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def open_session(session: Session, provider: str, external_id: str, now: datetime) -> str:
    """A new session of the person `provider`/`external_id`; its key, for the cookie only."""
    key = secrets.token_urlsafe(32)
    row = WebSession(
        key_hash=digest(key),
        provider=provider,
        external_id=external_id,
        started_at=now,
        seen_at=now,
        checked_at=now,
    )
    session.add(row)
    return key


def _row(session: Session, key: str) -> WebSession | None:
    return session.scalar(select(WebSession).where(WebSession.key_hash == digest(key)))


def find(
    session: Session, key: str, now: datetime, lifetimes: Lifetimes, *, seen: bool = True
) -> Live | None:
    """The session of `key` if it is still good (one indexed read); one past a lifetime is
    deleted. Its `seen_at` moves on when it is older than `lifetimes.touch`, unless `seen` is
    False: a live page's stream asks whether its session still lives, and a tab left open is
    not a person at work."""
    row = _row(session, key)
    if row is None:
        return None
    if now - row.started_at >= lifetimes.absolute or now - row.seen_at >= lifetimes.idle:
        session.delete(row)
        return None
    if seen and now - row.seen_at >= lifetimes.touch:
        row.seen_at = now
    return Live(row.id, row.provider, row.external_id, row.checked_at)


def rotate(session: Session, key: str, now: datetime) -> str | None:
    """A new key for the session of `key` (its privileges changed), the old one dead at once;
    its sign-in time stays. None when that session is gone."""
    row = _row(session, key)
    if row is None:
        return None
    new = secrets.token_urlsafe(32)
    row.key_hash, row.seen_at = digest(new), now
    return new


def token_checked(session: Session, session_id: int, now: datetime) -> None:
    found = session.get(WebSession, session_id)
    if found is not None:
        found.checked_at = now


def end(session: Session, key: str) -> None:
    """Sign out: the session of `key` ends."""
    session.execute(delete(WebSession).where(WebSession.key_hash == digest(key)))


def end_everywhere(session: Session, provider: str, external_id: str) -> int:
    """End every session of this person: those signed in with this account, and with any other
    account of the Resolver user it is linked to. How many ended."""
    people = {(provider, external_id)}
    user_id = select(Identity.user_id).where(
        Identity.provider == provider, Identity.external_id == external_id
    )
    linked = select(Identity.provider, Identity.external_id).where(
        Identity.user_id.in_(user_id.scalar_subquery())
    )
    people.update((p, e) for p, e in session.execute(linked))
    return end_people(session, people)


def end_people(session: Session, people: Iterable[tuple[str, str]]) -> int:
    wanted = [
        and_(WebSession.provider == provider, WebSession.external_id == external_id)
        for provider, external_id in people
    ]
    if not wanted:
        return 0
    ended = session.execute(delete(WebSession).where(or_(*wanted)))
    return int(getattr(ended, "rowcount", 0) or 0)


def sweep(session: Session, now: datetime, lifetimes: Lifetimes) -> int:
    """Delete the sessions past a lifetime that nobody came back to; how many."""
    stale = or_(
        WebSession.started_at <= now - lifetimes.absolute,
        WebSession.seen_at <= now - lifetimes.idle,
    )
    ended = session.execute(delete(WebSession).where(stale))
    return int(getattr(ended, "rowcount", 0) or 0)
