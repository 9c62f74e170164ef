"""What a batch of mentions costs the database: a fixed number of statements, whatever its size.

SQLite once inserted a batch's callbacks (and jobs) one row per statement, since SQLAlchemy
cannot return a multi-row insert's ids in the parameters' order there; and each delivery row was
written twice (claimed, then linked to its job).
"""

from __future__ import annotations

import pytest

from resolver.ingress.intake import record
from resolver.store.db import get_engine
from tests.ingress.test_intake_rows import CODERTOCAT, mention
from tests.integrations.conftest import Store
from tests.support.statements import counted

STATEMENTS = 7
"""A round of mentions (distinct conversations): its write lock (SQLite) or conversation locks
(PostgreSQL), the conversations' latest jobs, the senders' users, the jobs, the deliveries
(each with its job), the jobs' places in the queue, and the acknowledgements."""


@pytest.fixture
def store(intake_store: Store) -> Store:
    intake_store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    return intake_store


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
@pytest.mark.parametrize("size", [1, 5])
def test_a_batch_of_mentions_is_a_fixed_number_of_statements(store: Store, size: int) -> None:
    batch = [mention(number) for number in range(1, size + 1)]
    with counted() as statements, get_engine().begin() as conn:
        accepted = record(conn, batch)
    assert len(statements) == STATEMENTS, [s.split(None, 1)[0] for s in statements]
    assert [a.kind for a in accepted] == ["created"] * size
    # Each answer names its own job's acknowledgements, 👀 first (ids in the rows' order).
    by_id = {callback.id: callback for callback in store.callbacks()}
    for answer in accepted:
        callbacks = [by_id[callback_id] for callback_id in answer.callbacks]
        assert [c.action for c in callbacks] == ["react", "status"]
        assert {c.job_id for c in callbacks} == {answer.job_id}
    assert {d.job_id for d in store.deliveries()} == {a.job_id for a in accepted}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_a_redelivery_in_a_batch_leaves_no_job_of_its_own(store: Store) -> None:
    first = mention(1)
    with get_engine().begin() as conn:
        [created] = record(conn, [first])
    with get_engine().begin() as conn:
        again, other = record(conn, [first, mention(2)])
    assert (again.kind, again.job_id) == ("duplicate", created.job_id)
    assert other.kind == "created"
    assert [job.id for job in store.jobs()] == [created.job_id, other.job_id]
    assert len(store.callbacks()) == 4
