"""One-time links (the operator's `resolver setup url`, an unlinked sender's `/link/<token>`):
the first use is recorded, under a hash of the link's own key, until the link would have
expired anyway; a second use finds it."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from resolver.store.models import UsedLink


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def use(session: Session, key: str, expires_at: datetime, now: datetime) -> bool:
    """Record the use of the link `key`; False when it was used already (two uses at once:
    one of them wins). Undone with the caller's transaction."""
    session.execute(delete(UsedLink).where(UsedLink.expires_at <= now))
    try:
        with session.begin_nested():
            session.add(UsedLink(key_hash=_digest(key), expires_at=expires_at))
    except IntegrityError:
        return False
    return True


def was_used(session: Session, key: str) -> bool:
    found = select(UsedLink.key_hash).where(UsedLink.key_hash == _digest(key))
    return session.scalar(found) is not None
