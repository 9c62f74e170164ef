"""Notices: replies that need no agent run. Recorded here, sent by the callback queue.

The unique `(provider, dedup_key)` constraint is the rate limit: recording the same notice
twice is a no-op, so nobody is told the same thing twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from resolver.store.models import Callback, Notice

NOTICE_ACTION = "notice"
UNLINKED = "unlinked"
QUEUED = "queued"


@dataclass(frozen=True)
class NewNotice:
    provider: str
    kind: str
    dedup_key: str
    conversation_key: str
    body: str
    context: dict[str, Any]
    job_id: int | None = None


def record_notice(session: Session, notice: NewNotice) -> int | None:
    """Insert the notice unless one with its dedup key exists, with the callback that sends it.

    Returns the callback's id, to publish after the commit (`publish_callback`); None when the
    notice was already recorded.
    """
    values = {
        "provider": notice.provider,
        "kind": notice.kind,
        "dedup_key": notice.dedup_key[:300],
        "conversation_key": notice.conversation_key[:300],
        "body": notice.body,
        "context": notice.context,
        "job_id": notice.job_id,
    }
    statement = _INSERT_ONCE.get(
        session.get_bind().dialect.name, insert(Notice).returning(Notice.id)
    )
    notice_id = session.execute(statement, values).scalar()
    if notice_id is None:
        return None
    callback = Callback(
        provider=notice.provider,
        action=NOTICE_ACTION,
        payload={"notice_id": notice_id},
        job_id=notice.job_id,
    )
    session.add(callback)
    session.flush()
    return callback.id


# ON CONFLICT DO NOTHING, per dialect (only SQLite and PostgreSQL are supported: config.py).
_INSERT_ONCE: dict[str, Any] = {
    "sqlite": sqlite.insert(Notice).on_conflict_do_nothing().returning(Notice.id),
    "postgresql": postgresql.insert(Notice).on_conflict_do_nothing().returning(Notice.id),
}
