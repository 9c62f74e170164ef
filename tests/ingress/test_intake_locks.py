"""Batches written by different server processes see each other's jobs: a batch waits for every
other writer of its conversations before it reads, so a follow-up finds the job it follows even
when that job's transaction was still open when the follow-up arrived.
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text

from resolver.contract.triggers import read_trigger
from resolver.ingress.intake import Accepted, Pending, record
from resolver.store.db import get_engine
from resolver.store.deliveries import lock_conversations
from tests.conftest import ResolverEnv
from tests.ingress.test_intake_rows import CODERTOCAT, mention
from tests.integrations.conftest import Store


@pytest.fixture
def store(intake_store: Store) -> Store:
    intake_store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    return intake_store


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_batch_holds_the_write_lock_before_it_reads(
    store: Store, resolver_env: ResolverEnv
) -> None:
    other = sqlite3.connect(resolver_env.database_url.removeprefix("sqlite:///"), timeout=0)
    try:
        with get_engine().begin() as conn:
            lock_conversations(conn, [mention(1).conversation_key])
            # Before the batch's first read, no other writer can start one.
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
            record(conn, [mention(1)])  # the lock it already holds does for the batch
        other.execute("BEGIN IMMEDIATE")  # committed: free again
        other.rollback()
    finally:
        other.close()


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_follow_up_waits_for_the_open_transaction_of_its_conversation(store: Store) -> None:
    with get_engine().connect() as first_writer, ThreadPoolExecutor(1) as pool:
        transaction = first_writer.begin()
        [first] = record(first_writer, [mention(1)])
        later = pool.submit(_record_alone, mention(1))
        _wait_until_one_waits_for_an_advisory_lock()
        assert not later.done()
        transaction.commit()
        second = later.result(timeout=30)
    assert (first.kind, second.kind) == ("created", "created")
    [_, job] = store.jobs()
    assert job.id == second.job_id
    assert read_trigger(job.trigger).origin.is_followup is True
    assert read_trigger(job.trigger).origin.previous_job_id == first.job_id


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_batches_of_other_conversations_do_not_wait(store: Store) -> None:
    with get_engine().connect() as first_writer, ThreadPoolExecutor(1) as pool:
        transaction = first_writer.begin()
        record(first_writer, [mention(1)])
        try:
            other = pool.submit(_record_alone, mention(2)).result(timeout=30)
        finally:
            transaction.commit()
    assert other.kind == "created"


def _record_alone(pending: Pending) -> Accepted:
    with get_engine().begin() as conn:
        [accepted] = record(conn, [pending])
    return accepted


def _wait_until_one_waits_for_an_advisory_lock() -> None:
    """Poll PostgreSQL's lock table (no sleeping on a guess): until a session waits."""
    with get_engine().connect() as conn:
        for _ in range(10_000):
            waiting = conn.execute(
                text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            ).scalar_one()
            conn.rollback()
            if waiting:
                return
    raise AssertionError("the second batch never waited for the conversation's lock")
