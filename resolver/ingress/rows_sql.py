"""The intake's SQL, run at the driver level: each statement covers a whole batch; its text is built
once per database (and, on SQLite, per batch size); its values are bound as the ORM binds them.

SQLAlchemy's work per execution and per bound value (compiling parameters, JSON and DATETIME
processors, result rows) cost several times what SQLite itself does with a batch. A set of rows
stands where `{rows}` is: `VALUES (?, …), …` on SQLite, one array per column on PostgreSQL
(`unnest(%b::text[], …)`), because psycopg parses placeholders in Python and caches only
statements with few of them. tests/integrations/test_intake_rows.py holds these rows to the ORM's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any, Final

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.engine.interfaces import DBAPIModule
from sqlalchemy.exc import DBAPIError

from resolver.core.states import JobState
from resolver.store.models import UTCDateTime, utcnow

Values = tuple[Any, ...]


@dataclass(frozen=True)
class Statement:
    """SQL over a set of rows, which goes where `{rows}` stands; the rows' columns are named with
    their PostgreSQL types (SQLite needs none)."""

    sql: str
    columns: tuple[tuple[str, str], ...]
    _names: frozenset[str] = field(init=False, compare=False, repr=False)
    _in_order: Callable[[dict[str, Any]], Values] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        names = [name for name, _ in self.columns]
        # itemgetter of one name gives the value itself, not a tuple.
        in_order = itemgetter(*names) if len(names) > 1 else lambda row: (row[names[0]],)
        object.__setattr__(self, "_names", frozenset(names))
        object.__setattr__(self, "_in_order", in_order)

    def row(self, **values: Any) -> Values:
        """One row's values, named by column, in the statement's order."""
        if values.keys() != self._names:
            raise TypeError(f"expected the columns {sorted(self._names)}, not {sorted(values)}")
        return self._in_order(values)


def _insert(table: str, returning: str, conflict: str = "", **columns: str) -> Statement:
    names = ", ".join(f'"{name}"' for name in columns)
    tail = " ".join(part for part in (conflict, returning) if part)
    return Statement(f"INSERT INTO {table} ({names}) {{rows}} {tail}", tuple(columns.items()))


_ACTIVE: Final = ", ".join(f"'{state.value}'" for state in (JobState.QUEUED, JobState.RUNNING))
_ONCE: Final = "ON CONFLICT DO NOTHING"

# Per key, not grouped: a max over an index range is one probe, a grouped max reads the range.
LATEST_JOBS: Final = Statement(
    "WITH conversation (conversation_key) AS ({rows}) SELECT conversation_key,"
    " (SELECT max(id) FROM jobs WHERE jobs.conversation_key = conversation.conversation_key)"
    " FROM conversation",
    (("conversation_key", "text"),),
)
"""Per conversation: its latest job, or None."""
# Joined, not `(provider, …) IN (VALUES …)`, for which SQLite scans the whole table.
USERS_BY_SENDER: Final = Statement(
    "WITH sender (provider, external_id) AS ({rows})"
    " SELECT sender.provider, sender.external_id, identities.user_id FROM sender JOIN identities"
    " ON identities.provider = sender.provider AND identities.external_id = sender.external_id",
    (("provider", "text"), ("external_id", "text")),
)
FIRST_JOBS: Final = Statement(
    "WITH copy (provider, delivery_key) AS ({rows})"
    " SELECT copy.provider, copy.delivery_key, deliveries.job_id FROM copy JOIN deliveries"
    " ON deliveries.provider = copy.provider AND deliveries.delivery_key = copy.delivery_key",
    (("provider", "text"), ("delivery_key", "text")),
)
LINK_DELIVERIES: Final = Statement(
    "WITH link (delivery, job) AS ({rows})"
    " UPDATE deliveries SET job_id = link.job FROM link WHERE deliveries.id = link.delivery",
    (("delivery", "int"), ("job", "int")),
)
# One count per owner, so each can use its own index (an OR of both would not).
JOBS_AHEAD: Final = Statement(
    "SELECT job.id,"  # noqa: S608 (the states are constants; every value is bound)
    " (SELECT count(*) FROM jobs AS earlier WHERE earlier.requester_id = job.requester_id"
    f" AND earlier.state IN ({_ACTIVE}) AND earlier.id < job.id),"
    " (SELECT count(*) FROM jobs AS earlier WHERE earlier.repo = job.repo"
    f" AND earlier.state IN ({_ACTIVE}) AND earlier.id < job.id)"
    " FROM jobs AS job WHERE job.id IN ({rows})",
    (("id", "int"),),
)
"""Per job: the active jobs ahead of it with the same requester, and with the same repository."""
# PostgreSQL only; the keys come sorted, and a scan of an array takes them in its order.
LOCK_CONVERSATIONS: Final = Statement(
    "SELECT pg_advisory_xact_lock(conversation.lock_key) FROM ({rows}) AS conversation (lock_key)",
    (("lock_key", "int8"),),
)

# A row that a conflict skipped returns nothing.
CLAIM_DELIVERIES: Final = _insert(
    "deliveries",
    "RETURNING id, provider, delivery_key",
    _ONCE,
    provider="text",
    delivery_key="text",
    event="text",
    outcome="text",
    received_at="timestamptz",
)
INSERT_JOBS: Final = _insert(
    "jobs",
    "RETURNING id, message_id",
    source="text",
    task="text",
    repo="text",
    requester="text",
    requester_id="int",
    trigger="json",
    conversation_key="text",
    state="text",
    message_id="text",
    result="json",
    prompt_tokens="int",
    completion_tokens="int",
    attempts="int",
    cancel_requested="bool",
    created_at="timestamptz",
    updated_at="timestamptz",
)
INSERT_NOTICES: Final = _insert(
    "notices",
    "RETURNING id, provider, dedup_key",
    _ONCE,
    provider="text",
    kind="text",
    dedup_key="text",
    conversation_key="text",
    body="text",
    context="json",
    job_id="int",
    created_at="timestamptz",
)
# The payload as its text, which both databases return verbatim (psycopg would parse JSON).
INSERT_CALLBACKS: Final = _insert(
    "callbacks",
    "RETURNING id, CAST(payload AS TEXT)",
    job_id="int",
    provider="text",
    action="text",
    payload="json",
    state="text",
    result="json",
    created_at="timestamptz",
    due_at="timestamptz",
)


def run(conn: Connection, statement: Statement, rows: Sequence[Values]) -> list[Values]:
    """Execute `statement` over `rows` on the DBAPI connection of `conn`, in its transaction; the
    rows it returns. Errors are raised as SQLAlchemy raises them."""
    returned: list[Values] = []
    # Each row stands alone in every statement here, so a long batch may go in parts: within
    # SQLite's limit of 32766 bound values, as SQLAlchemy's multi-row inserts keep to one too.
    for start in range(0, len(rows), _MOST_ROWS):
        returned += _run(conn, statement, rows[start : start + _MOST_ROWS])
    return returned


_MOST_ROWS: Final = 1000


def lock_conversations(conn: Connection, conversation_keys: Iterable[str]) -> None:
    """Before the batch reads anything, wait for every other writer of its conversations, so that
    it sees the jobs they commit (a follow-up finds the job it follows, across server processes).
    SQLite takes its write lock now rather than at the first insert; PostgreSQL takes an
    advisory lock per conversation until the transaction ends, in one order for every writer."""
    if conn.dialect.name == "sqlite":
        driver = conn.connection.dbapi_connection
        if driver is not None and not driver.in_transaction:
            _execute(conn, "BEGIN IMMEDIATE", ())
        return
    keys = sorted({_lock_key(key) for key in conversation_keys})
    if keys:
        run(conn, LOCK_CONVERSATIONS, [(key,) for key in keys])


def _lock_key(conversation_key: str) -> int:
    """A conversation's advisory lock: 64 bits of a stable hash (Python's own is salted)."""
    digest = hashlib.blake2b(conversation_key.encode(), digest_size=8, person=b"resolver").digest()
    return int.from_bytes(digest, "big", signed=True)


def _run(conn: Connection, statement: Statement, rows: Sequence[Values]) -> Sequence[Values]:
    if conn.dialect.name == "sqlite":
        sql = _on_sqlite(statement, len(rows))
        values: Values = tuple(chain.from_iterable(rows))
    else:  # psycopg (3), the only PostgreSQL driver installed
        sql = _on_postgresql(statement)
        values = tuple(list(column) for column in zip(*rows, strict=True))
    return _execute(conn, sql, values)


def _execute(conn: Connection, sql: str, values: Values) -> Sequence[Values]:
    cursor = conn.connection.cursor()
    try:
        cursor.execute(sql, values)
        return cursor.fetchall() if cursor.description else ()
    except conn.dialect.loaded_dbapi.Error as error:
        raise _as_sqlalchemy_raises(conn, error, cursor, sql, values) from error
    finally:
        cursor.close()


def _as_sqlalchemy_raises(
    conn: Connection, error: DBAPIModule.Error, cursor: Any, sql: str, values: Values
) -> Exception:
    """SQLAlchemy's exception for a DBAPI error (batching tells an unavailable database apart by
    it); a lost connection is invalidated, so that the pool replaces it."""
    lost = conn.dialect.is_disconnect(error, conn.connection.dbapi_connection, cursor)
    if lost:
        conn.invalidate(error)
    return DBAPIError.instance(
        sql,
        values,
        error,
        conn.dialect.loaded_dbapi.Error,
        hide_parameters=conn.engine.hide_parameters,
        connection_invalidated=lost,
        dialect=conn.dialect,
    )


@lru_cache(maxsize=256)
def _on_sqlite(statement: Statement, count: int) -> str:
    row = "(" + ", ".join("?" for _ in statement.columns) + ")"
    return statement.sql.replace("{rows}", "VALUES " + ", ".join([row] * count))


@lru_cache(maxsize=32)
def _on_postgresql(statement: Statement) -> str:
    arrays = ", ".join(f"%b::{kind}[]" for _, kind in statement.columns)
    return statement.sql.replace("{rows}", f"SELECT * FROM unnest({arrays})")  # noqa: S608


def to_json(value: Any) -> str:
    """A JSON column's value, as SQLAlchemy's JSON type binds it (resolver.store.db configures no
    serializer of its own)."""
    return json.dumps(value)


def now(conn: Connection) -> Any:
    """The time, as the connection's database stores a `UTCDateTime` column."""
    return _timestamp(conn.dialect)(utcnow())


@lru_cache(maxsize=4)
def _timestamp(dialect: Dialect) -> Callable[[datetime], Any]:
    process = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
    return process or (lambda value: value)
