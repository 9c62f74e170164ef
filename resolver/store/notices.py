"""Notices: replies that need no agent run. Recorded here, sent by the callback queue.

The unique `(provider, dedup_key)` constraint is the rate limit: recording the same notice
twice is a no-op, so nobody is told the same thing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from resolver.contract.callbacks import NoticePost, dump_payload
from resolver.contract.notices import NoticeContext, dump_notice_context
from resolver.contract.outbound import NOTICE
from resolver.store.db import like_escaped
from resolver.store.models import Callback, Notice

NOTICE_ACTION = NOTICE
UNLINKED = "unlinked"


@dataclass(frozen=True)
class NewNotice:
    provider: str
    kind: str
    dedup_key: str
    conversation_key: str
    body: str
    context: NoticeContext
    job_id: int | None = None


# Built once: building a statement costs more than running it (its compiled form is cached).
_RETURNING = (Notice.id, Notice.provider, Notice.dedup_key)
_INSERT_ONCE = {
    "postgresql": postgresql.insert(Notice).on_conflict_do_nothing().returning(*_RETURNING),
    "sqlite": sqlite.insert(Notice).on_conflict_do_nothing().returning(*_RETURNING),
}
_INSERT_CALLBACKS = insert(Callback).returning(Callback.id, sort_by_parameter_order=True)


def record_notice(session: Session, notice: NewNotice) -> int | None:
    """Insert the notice unless one with its dedup key exists, with the callback that sends it.

    Returns the callback's id, to publish after the commit (`publish_callback`); None when the
    notice was already recorded.
    """
    return insert_notices(session.connection(), [notice])[0]


def insert_notices(conn: Connection, notices: Sequence[NewNotice]) -> list[int | None]:
    """`record_notice` for many, in two statements: each notice's sending callback id, or None
    for one recorded before (its dedup key taken)."""
    if not notices:
        return []
    rows = [
        {
            "provider": notice.provider,
            "kind": notice.kind,
            "dedup_key": notice.dedup_key[:300],
            "conversation_key": notice.conversation_key[:300],
            "body": notice.body,
            "context": dump_notice_context(notice.context),
            "job_id": notice.job_id,
        }
        for notice in notices
    ]
    statement = _INSERT_ONCE["postgresql" if conn.dialect.name == "postgresql" else "sqlite"]
    inserted = {(p, key): notice_id for notice_id, p, key in conn.execute(statement, rows)}
    new: list[tuple[int, int]] = []
    for n, row in enumerate(rows):
        notice_id = inserted.pop((str(row["provider"]), str(row["dedup_key"])), None)
        if notice_id is not None:  # the first of the batch to ask for it
            new.append((n, notice_id))
    ids: list[int | None] = [None] * len(notices)
    if not new:
        return ids
    sending = _INSERT_CALLBACKS
    callbacks = [
        {
            "provider": notices[n].provider,
            "action": NOTICE_ACTION,
            "payload": dump_payload(NoticePost(notice_id=notice_id)),
            "job_id": notices[n].job_id,
        }
        for n, notice_id in new
    ]
    for (n, _), (callback_id,) in zip(new, conn.execute(sending, callbacks), strict=True):
        ids[n] = callback_id
    return ids


def waiting_request(
    session: Session, provider: str, external_id: str, since: datetime
) -> Notice | None:
    """The newest unlinked-sender notice of this sender since `since` whose request has not
    run yet."""
    query = (
        select(Notice)
        .where(
            Notice.provider == provider,
            Notice.kind == UNLINKED,
            Notice.dedup_key.like(f"{UNLINKED}:{like_escaped(external_id)}:%", escape="\\"),
            Notice.job_id.is_(None),
            Notice.created_at >= since,
        )
        .order_by(Notice.id.desc())
        .limit(1)
    )
    return session.scalar(query)


def claim_request(session: Session, notice_id: int, job_id: int) -> bool:
    """Tie the notice to the job that runs its request; False if another got there first."""
    done = session.execute(
        update(Notice).where(Notice.id == notice_id, Notice.job_id.is_(None)).values(job_id=job_id)
    )
    return bool(getattr(done, "rowcount", 0))
