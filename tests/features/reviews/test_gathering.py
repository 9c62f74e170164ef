"""A review batch gathered over a window (`ReviewBatch.gather_until`, set where a forge sends
each comment alone) waits for the window to close before its threads are read; a stop ends
the wait, and no trigger holds a worker longer than the cap. Any other job never waits."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from resolver.contract.triggers import PullRequest, Repository, ReviewBatch, TaskTrigger
from resolver.features.reviews import worker
from resolver.features.reviews.worker import gather_review
from resolver.worker.values import Snapshot


def snapshot(trigger: TaskTrigger) -> Snapshot:
    return Snapshot(1, "azuredevops", "fix it", "W/w", "alice", 1, trigger, None, None)


def batch(until: datetime | None) -> ReviewBatch:
    return ReviewBatch(repo=Repository(full_name="W/w"), number=1, gather_until=until)


def took(trigger: TaskTrigger, cancelled: threading.Event | None = None) -> float:
    started = time.monotonic()
    gather_review(snapshot(trigger), cancelled or threading.Event())
    return time.monotonic() - started


def test_a_batch_waits_until_its_window_has_closed() -> None:
    assert 0.4 < took(batch(datetime.now(UTC) + timedelta(seconds=0.5))) < 2


def test_a_closed_window_or_any_other_job_does_not_wait() -> None:
    assert took(batch(datetime.now(UTC) - timedelta(minutes=5))) < 0.1
    assert took(batch(None)) < 0.1
    assert took(PullRequest(repo=Repository(full_name="W/w"), number=1)) < 0.1


def test_a_stop_ends_the_wait() -> None:
    cancelled = threading.Event()
    threading.Timer(0.2, cancelled.set).start()
    assert took(batch(datetime.now(UTC) + timedelta(hours=1)), cancelled) < 2


def test_no_window_holds_a_worker_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "MAX_GATHER_SECONDS", 0.3)
    assert took(batch(datetime.now(UTC) + timedelta(days=1))) < 2


def test_the_window_survives_the_stored_json() -> None:
    until = datetime(2026, 11, 20, 9, 53, 36, tzinfo=UTC)
    stored = batch(until).model_dump(mode="json")
    assert ReviewBatch.model_validate(stored).gather_until == until
