"""The rows a batch writes are the rows the ORM writes: the same columns, defaults, JSON text and
timestamp storage, read back the same way, on both databases.

The batch path (`ingress.intake.record`) writes its own SQL; each of its rows gets a twin written
through the ORM path (`create_job`, `record_notice`, a `Delivery` object) from the same values, and
the two are compared column by column, both as stored and as the ORM loads them. Only what differs
by nature (ids, random message ids, unique keys, the time of writing) is compared by its shape.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import JSON, Connection, text
from sqlalchemy.orm import Session

from resolver.contract.notices import read_notice_context
from resolver.ingress.intake import Accepted, Pending, record
from resolver.store.conversations import latest_jobs
from resolver.store.db import get_engine, session_scope
from resolver.store.jobs import NewJob, create_job
from resolver.store.models import Base, Callback, Delivery, Job, Notice
from resolver.store.notices import NewNotice, record_notice
from tests.integrations.conftest import Store, reset_caches
from tests.integrations.deliveries import BY_NAME, github, load

CODERTOCAT = "21031067"
# Columns whose values differ between any two rows; their shape (type, digits masked) must agree.
BY_NATURE = {
    "jobs": {"id", "message_id", "created_at", "updated_at"},
    "deliveries": {"id", "delivery_key", "received_at"},
    "notices": {"id", "dedup_key", "created_at"},
    "callbacks": {"id", "payload", "created_at", "due_at"},
}


@pytest.fixture
def store(intake_store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A user cap of 1, so a second job queues."""
    monkeypatch.setenv("RESOLVER_MAX_JOBS_PER_USER", "1")
    reset_caches()
    return intake_store


def mention(number: int, sender: str = CODERTOCAT) -> Pending:
    """A signed GitHub mention through the real verify, parse and route."""
    from resolver.core.settings import get_settings
    from resolver.ingress.endpoint import route

    payload = load("github", "issue_comment.created__on_issue")
    payload["comment"]["body"] = f"@resolver fix issue {number}"
    payload["issue"]["number"] = number
    payload["sender"].update(id=int(sender), login=f"user{sender}")
    delivery = github("issue_comment.created", payload)
    headers = {name.lower(): value for name, value in delivery.headers.items()}
    pending = route(BY_NAME["github"], headers, delivery.body, get_settings())
    assert isinstance(pending, Pending)
    return pending


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_batch_rows_read_back_as_the_orm_writes_them(store: Store) -> None:
    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    with get_engine().begin() as conn:
        first, queued, unlinked = record(conn, [mention(1), mention(2), mention(3, sender="9")])
    assert (first.kind, queued.kind, unlinked.kind) == ("created", "created", "unlinked")
    assert queued.queued_behind == 1 and queued.callbacks and unlinked.callbacks
    for batch_job in (first, queued):
        assert_twins(Job, batch_job.job_id, twin_job(batch_job))
    for delivery_id in delivery_ids():
        assert_twins(Delivery, delivery_id, twin_delivery(delivery_id))
    assert [c.action for c in store.callbacks()][:4] == ["react", "status", "react", "status"]
    [callback_id] = unlinked.callbacks
    twin_callback_id = twin_notice(notice_of(callback_id))
    assert_twins(Notice, notice_of(callback_id), notice_of(twin_callback_id))
    assert_twins(Callback, callback_id, twin_callback_id)


def twin_job(answer: Accepted) -> int:
    with session_scope() as session:
        job = session.get_one(Job, answer.job_id)
        fields = {name: getattr(job, name) for name in ("source", "task", "repo", "requester")}
        twin = NewJob(
            **fields,
            requester_id=job.requester_id,
            trigger=job.trigger,
            conversation_key=job.conversation_key,
        )
        return create_job(session, twin).id


def delivery_ids() -> list[int]:
    with session_scope() as session:
        return list(session.scalars(text("SELECT id FROM deliveries ORDER BY id")))


def twin_delivery(delivery_id: int) -> int:
    with session_scope() as session:
        delivery = session.get_one(Delivery, delivery_id)
        twin = Delivery(
            provider=delivery.provider,
            delivery_key=f"twin-{delivery.delivery_key}",
            event=delivery.event,
            outcome=delivery.outcome,
            job_id=delivery.job_id,
        )
        session.add(twin)
        session.flush()
        return twin.id


def twin_notice(notice_id: int) -> int:
    """Record the notice's twin through the ORM path; the callback that sends it."""
    with session_scope() as session:
        notice = session.get_one(Notice, notice_id)
        twin = NewNotice(
            provider=notice.provider,
            kind=notice.kind,
            dedup_key=f"twin-{notice.dedup_key}",
            conversation_key=notice.conversation_key,
            body=notice.body,
            context=read_notice_context(notice.context),
            job_id=notice.job_id,
        )
        twin_callback = record_notice(session, twin)
        assert twin_callback is not None
        return twin_callback


def notice_of(callback_id: int) -> int:
    """The notice a callback sends."""
    with session_scope() as session:
        notice_id = session.get_one(Callback, callback_id).payload["notice_id"]
        assert isinstance(notice_id, int)
        return notice_id


def assert_twins(model: type[Base], batch_id: int | None, orm_id: int) -> None:
    """The two rows agree as stored (the driver's values, JSON as its text) and as loaded."""
    assert batch_id is not None
    with get_engine().connect() as conn:
        stored = [_stored(conn, model, row_id) for row_id in (batch_id, orm_id)]
    assert _masked(model, stored[0]) == _masked(model, stored[1])
    with Session(get_engine()) as session:
        loaded = [_loaded(session, model, row_id) for row_id in (batch_id, orm_id)]
    assert _masked(model, loaded[0]) == _masked(model, loaded[1])


def _stored(conn: Connection, model: type[Base], row_id: int) -> dict[str, Any]:
    table = model.__table__
    as_text = [f"CAST({c.name} AS TEXT) AS {c.name}_text" for c in table.c if _is_json(c.type)]
    columns = ", ".join(["*", *as_text])
    query = text(f"SELECT {columns} FROM {table.name} WHERE id = :id")
    return dict(conn.execute(query, {"id": row_id}).mappings().one())


def _loaded(session: Session, model: type[Base], row_id: int) -> dict[str, Any]:
    row = session.get_one(model, row_id)
    return {column.key: getattr(row, column.key) for column in model.__table__.c}


def _is_json(column_type: Any) -> bool:
    return isinstance(column_type, JSON)


def _masked(model: type[Base], row: dict[str, Any]) -> dict[str, Any]:
    by_nature = BY_NATURE[model.__table__.name]
    return {
        name: _shape(value) if name.removesuffix("_text") in by_nature else (type(value), value)
        for name, value in row.items()
    }


def _shape(value: Any) -> Any:
    """What two values of a column that differ by nature must share: type and layout."""
    if isinstance(value, datetime):
        return (datetime, value.utcoffset())
    if isinstance(value, dict):
        return (dict, sorted(value))
    if isinstance(value, str):
        return (str, re.sub(r"[0-9a-f]", "0", value.removeprefix("twin-")))
    return type(value)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_a_batch_larger_than_one_statement_takes_is_written_whole(store: Store) -> None:
    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    keys = [f"github:o/r#{n}" for n in range(2500)]
    with get_engine().begin() as conn:
        assert latest_jobs(conn, keys) == {}
        answers = record(conn, [mention(n) for n in range(1, 1201)])  # more than one page
    assert [answer.kind for answer in answers] == ["created"] * 1200
    assert len({answer.job_id for answer in answers}) == 1200
