"""A database error in the middle of a batch surfaces as SQLAlchemy raises it, though the intake
runs its statements on the driver: batching tells an unavailable database apart by it (and then
does not retry each trigger alone), and the pool replaces a lost connection.
"""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy.exc import OperationalError

from resolver.ingress.batching import write_batch
from resolver.ingress.intake import Accepted, record
from resolver.store.db import get_engine, make_engine
from tests.conftest import ResolverEnv
from tests.ingress.test_intake_rows import CODERTOCAT, mention
from tests.integrations.conftest import Store


@pytest.fixture
def store(intake_store: Store) -> Store:
    intake_store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    return intake_store


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_locked_database_is_an_operational_error(store: Store, resolver_env: ResolverEnv) -> None:
    holder = sqlite3.connect(resolver_env.database_url.removeprefix("sqlite:///"))
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    engine = make_engine(resolver_env.database_url)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA busy_timeout = 1")
            conn.commit()
            with pytest.raises(OperationalError, match="locked"), conn.begin():
                record(conn, [mention(1)])
    finally:
        engine.dispose()
        holder.rollback()
    assert store.jobs() == [] and store.deliveries() == []


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_connection_lost_mid_batch_is_replaced(store: Store) -> None:
    with pytest.raises(OperationalError) as raised, get_engine().begin() as conn:
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        with get_engine().connect() as other:
            other.exec_driver_sql(f"SELECT pg_terminate_backend({int(pid)})")
        record(conn, [mention(1)])
    assert raised.value.connection_invalidated
    with get_engine().begin() as conn:
        [accepted] = record(conn, [mention(2)])
    assert accepted.kind == "created"
    assert [job.id for job in store.jobs()] == [accepted.job_id]


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_connection_dropped_between_batches_costs_no_request(store: Store) -> None:
    """The writer keeps its connection between batches and pings nothing: a connection the
    database dropped meanwhile is replaced, and the next mention is written all the same."""
    [first] = write_batch([mention(1)])
    assert isinstance(first, Accepted) and first.kind == "created"
    with get_engine().connect() as other:  # a restart, as far as the writer can tell
        other.exec_driver_sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    [second] = write_batch([mention(2)])
    assert isinstance(second, Accepted) and second.kind == "created"
    assert [job.id for job in store.jobs()] == [first.job_id, second.job_id]
