"""A queued job's place counts the active jobs ahead of it only so far past its cap, and says
"at least" beyond: the count is one bounded read per mention however long the queue (counting
them all made every mention's write grow with the backlog)."""

from __future__ import annotations

import pytest

from resolver.core import job as job_module
from resolver.ingress.intake import record
from resolver.store.db import get_engine
from tests.ingress.test_intake_rows import CODERTOCAT, mention
from tests.integrations.conftest import Store, reset_caches


@pytest.fixture
def store(intake_store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A user cap of 1, and places counted two jobs past a cap."""
    monkeypatch.setenv("RESOLVER_MAX_JOBS_PER_USER", "1")
    monkeypatch.setattr(job_module, "QUEUE_COUNTED", 2)
    reset_caches()
    return intake_store


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_a_long_queue_is_counted_so_far_and_says_at_least(store: Store) -> None:
    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    with get_engine().begin() as conn:
        answers = record(conn, [mention(n) for n in range(1, 7)])
    assert [a.queued_behind for a in answers] == [0, 1, 2, 3, 3, 3]
    assert [job.state for job in store.jobs()] == ["queued"] * 6  # nothing dropped
    counted, beyond = (store.status_text(a.job_id or 0) for a in answers[2::3])
    assert "behind 2 jobs" in counted and "at least" not in counted
    assert "behind at least 3 jobs" in beyond and "per user" in beyond
