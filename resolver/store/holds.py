"""Holds for the length of a transaction on named things (a conversation, a requester's or a
repository's slots), so that the writers of one thing go one at a time: whoever holds it reads
what every earlier holder committed.

SQLite has one writer at a time anyway: a hold takes its write lock at once (`BEGIN
IMMEDIATE`), before the transaction reads. PostgreSQL takes an advisory lock per name, all in
one statement and in one order for every writer, so that two holders cannot deadlock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlalchemy import text

if TYPE_CHECKING:
    from sqlalchemy import Connection

_LOCKS = text(
    "SELECT pg_advisory_xact_lock(k) FROM unnest(CAST(:keys AS bigint[])) WITH ORDINALITY"
    " AS locks(k, n) ORDER BY n"
)
"""Every lock of a hold in one statement, taken in the order of the (sorted) array: the scan
of `unnest … WITH ORDINALITY` is already in that order, and a volatile function in the select
list is evaluated after any sort. One statement per name had cost each a round trip."""


def hold(conn: Connection, names: Iterable[str]) -> None:
    """Wait for every other holder of any of `names`, then hold them until the transaction
    ends. On SQLite, call it before the transaction's first write (a read before it is fine:
    the driver opens the transaction only now)."""
    if conn.dialect.name == "sqlite":
        driver = conn.connection.dbapi_connection
        if driver is not None and not driver.in_transaction:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        return
    keys = sorted({_lock_key(name) for name in names})
    if keys:
        conn.execute(_LOCKS, {"keys": keys})


def _lock_key(name: str) -> int:
    """A name's advisory lock: 64 bits of a stable hash (Python's own is salted)."""
    digest = hashlib.blake2b(name.encode(), digest_size=8, person=b"resolver").digest()
    return int.from_bytes(digest, "big", signed=True)
