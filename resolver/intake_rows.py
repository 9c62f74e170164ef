"""The statements the intake runs and the rows they write. Each statement covers a whole
batch and is built once: composing a statement costs more than running it on SQLite, and one
statement over a batch costs little more than one over a single row.
"""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import (
    ColumnElement,
    Connection,
    Insert,
    ScalarSelect,
    bindparam,
    func,
    insert,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import aliased

from resolver.jobs import new_message_id
from resolver.models import Callback, Delivery, Identity, Job, Notice
from resolver.notices import NOTICE_ACTION, NewNotice
from resolver.states import JobState
from resolver.triggers import Trigger

LATEST_JOBS: Final = (
    select(Job.conversation_key, func.max(Job.id))
    .where(Job.conversation_key.in_(bindparam("keys", expanding=True)))
    .group_by(Job.conversation_key)
)
USERS_BY_SENDER: Final = select(Identity.provider, Identity.external_id, Identity.user_id).where(
    tuple_(Identity.provider, Identity.external_id).in_(bindparam("senders", expanding=True))
)
FIRST_JOBS: Final = select(Delivery.provider, Delivery.delivery_key, Delivery.job_id).where(
    tuple_(Delivery.provider, Delivery.delivery_key).in_(bindparam("deliveries", expanding=True))
)
INSERT_JOBS: Final = insert(Job).returning(Job.id, Job.message_id)
LINK_DELIVERIES: Final = (
    update(Delivery)
    .where(Delivery.id == bindparam("delivery"))
    .values(job_id=bindparam("job"))
    .execution_options(synchronize_session=False)
)

_EARLIER = aliased(Job)


def _ahead(same_owner: ColumnElement[bool]) -> ScalarSelect[int]:
    # One count per owner, so each can use its own index (an OR of both would not).
    active = _EARLIER.state.in_((JobState.QUEUED, JobState.RUNNING))
    return (
        select(func.count(_EARLIER.id))
        .where(same_owner, active, _EARLIER.id < Job.id)
        .scalar_subquery()
    )


JOBS_AHEAD: Final = select(
    Job.id,
    _ahead(_EARLIER.requester_id == Job.requester_id),
    _ahead(_EARLIER.repo == Job.repo),
).where(Job.id.in_(bindparam("jobs", expanding=True)))
"""Per job: the active jobs ahead of it with the same requester, and with the same repository."""

# INSERT … ON CONFLICT DO NOTHING RETURNING, per dialect (only SQLite and PostgreSQL are
# supported: config.py). A row a conflict skipped returns nothing.
CLAIM_DELIVERIES: Final = {
    name: dialect.insert(Delivery)
    .on_conflict_do_nothing()
    .returning(Delivery.id, Delivery.provider, Delivery.delivery_key)
    for name, dialect in (("sqlite", sqlite), ("postgresql", postgresql))
}
_NOTICES_ONCE: Final = {
    name: dialect.insert(Notice)
    .on_conflict_do_nothing()
    .returning(Notice.id, Notice.provider, Notice.dedup_key)
    for name, dialect in (("sqlite", sqlite), ("postgresql", postgresql))
}
_INSERT_CALLBACKS: Final = insert(Callback).returning(Callback.id, Callback.payload)


def job_row(
    provider: str, trigger: Trigger, user_id: int | None, context: dict[str, Any]
) -> dict[str, Any]:
    """The columns `resolver.jobs.create_job` sets, as a row of a multi-row insert."""
    return {
        "source": provider,
        "task": trigger.task,
        "repo": trigger.repo,
        "requester": trigger.sender.login or trigger.sender.external_id,
        "requester_id": user_id,
        "trigger": context,
        "conversation_key": trigger.conversation_key[:300],
        "state": JobState.QUEUED,
        # Known before the insert, so publishing needs no second write.
        "message_id": new_message_id(),
    }


def insert_once(conn: Connection, statements: dict[str, Insert]) -> Insert:
    return statements[conn.dialect.name]


def record_notices(conn: Connection, notices: dict[int, NewNotice]) -> dict[int, int]:
    """`resolver.notices.record_notice` for many: insert each notice unless one with its dedup
    key exists, with the callback that sends it. The new ones' callback ids, by position."""
    if not notices:
        return {}
    rows = [_notice_row(notice) for notice in notices.values()]
    positions = {
        (row["provider"], row["dedup_key"]): n for n, row in zip(notices, rows, strict=True)
    }
    inserted = conn.execute(insert_once(conn, _NOTICES_ONCE), rows)
    notice_ids = {positions[(provider, key)]: notice_id for notice_id, provider, key in inserted}
    if not notice_ids:
        return {}
    callbacks = [
        {
            "provider": notices[n].provider,
            "action": NOTICE_ACTION,
            "payload": {"notice_id": notice_id},
            "job_id": notices[n].job_id,
        }
        for n, notice_id in notice_ids.items()
    ]
    sending = conn.execute(_INSERT_CALLBACKS, callbacks)
    sent_by = {payload["notice_id"]: callback_id for callback_id, payload in sending}
    return {n: sent_by[notice_id] for n, notice_id in notice_ids.items()}


def _notice_row(notice: NewNotice) -> dict[str, Any]:
    return {
        "provider": notice.provider,
        "kind": notice.kind,
        "dedup_key": notice.dedup_key[:300],
        "conversation_key": notice.conversation_key[:300],
        "body": notice.body,
        "context": notice.context,
        "job_id": notice.job_id,
    }
