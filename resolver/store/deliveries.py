"""Deliveries, and the statements the ingress writes a batch of triggers with.

Each statement covers a whole batch with SQLAlchemy Core: a multi-row `INSERT … RETURNING`
(`insertmanyvalues`), the dialect's `ON CONFLICT DO NOTHING` where a copy may have been first,
and set-based reads. The model's column defaults fill what a row leaves out, so the rows are
the ones the ORM would write: there is one writer of each table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from sqlalchemy import bindparam, select
from sqlalchemy.dialects import postgresql, sqlite

from resolver.store import bound, holds
from resolver.store.models import Delivery

if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlalchemy.sql.dml import Insert

DeliveryId = tuple[str, str]
"""(provider, delivery key): what the unique constraint on deliveries is about."""


@dataclass(frozen=True)
class NewDelivery:
    """A delivery to claim: what it was, what became of it (`outcome`), and the job it made."""

    provider: str
    delivery_key: str
    event: str
    outcome: str
    job_id: int | None


def _claim_statements() -> dict[str, Insert]:
    returning = (Delivery.provider, Delivery.delivery_key)
    return {
        "postgresql": postgresql.insert(Delivery).on_conflict_do_nothing().returning(*returning),
        "sqlite": sqlite.insert(Delivery).on_conflict_do_nothing().returning(*returning),
    }


# Built once: building a statement costs more than running it (its compiled form is cached).
_CLAIM = _claim_statements()
_FIRST_JOBS = select(Delivery.delivery_key, Delivery.job_id).where(
    Delivery.provider == bindparam("provider"),
    Delivery.delivery_key.in_(bindparam("keys", expanding=True)),
)


def lock_conversations(conn: Connection, conversation_keys: Iterable[str]) -> None:
    """Before the batch reads anything, wait for every other writer of its conversations, so that
    it sees the jobs they commit (a follow-up finds the job it follows, across server processes):
    a hold on each conversation (`holds.hold`) until the transaction ends."""
    holds.hold(conn, conversation_keys)


def claim(conn: Connection, rows: Sequence[NewDelivery]) -> set[DeliveryId]:
    """Insert each delivery unless a copy got there first; the ones claimed. Rows go in one
    order for every writer, so that concurrent batches (PostgreSQL) cannot deadlock."""
    if not rows:
        return set()
    ordered = sorted(rows, key=lambda row: (row.provider, row.delivery_key))
    statement = _CLAIM[bound.dialect_of(conn)]
    values = [asdict(row) for row in ordered]
    return {(provider, key) for provider, key in conn.execute(statement, values)}


def first_jobs(conn: Connection, deliveries: Sequence[DeliveryId]) -> dict[DeliveryId, int | None]:
    """The job each already-claimed delivery made (None: it made none)."""
    found: dict[DeliveryId, int | None] = {}
    for provider in {provider for provider, _ in deliveries}:
        keys = [key for p, key in deliveries if p == provider]
        rows = conn.execute(_FIRST_JOBS, {"provider": provider, "keys": keys})
        found.update({(provider, key): job_id for key, job_id in rows})
    return found
