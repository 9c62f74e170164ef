"""The ingress writer's commits never checkpoint SQLite's write-ahead log themselves (a checkpoint
fsyncs twice, which the mention whose commit ran it would wait for): a thread of the process
copies the log into the database file soon after, in the background."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from resolver.ingress.batching import write_batch
from resolver.ingress.intake import Accepted
from resolver.store.db import CHECKPOINT_EVERY, checkpoint, kept_transaction
from tests.conftest import ResolverEnv
from tests.ingress.test_intake_rows import CODERTOCAT, mention
from tests.integrations.conftest import Store


@pytest.fixture
def store(intake_store: Store) -> Store:
    intake_store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    return intake_store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_writer_leaves_checkpoints_to_a_thread_of_the_process(
    store: Store, resolver_env: ResolverEnv
) -> None:
    path = Path(resolver_env.database_url.removeprefix("sqlite:///"))
    checkpoint(str(path))  # what the migrations wrote is in the file
    before = _digest(path)

    [accepted] = write_batch([mention(1)])

    assert isinstance(accepted, Accepted) and accepted.kind == "created"
    deadline = time.monotonic() + 10 * CHECKPOINT_EVERY + 5
    while _digest(path) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _digest(path) != before, "the job's rows never reached the database file"
    # Only now (its own commit asks for a checkpoint too): the writer's connection, as it was left.
    with kept_transaction() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one() == 0
    assert [job.id for job in store.jobs()] == [accepted.job_id]


def test_a_checkpoint_of_a_vanished_file_does_not_make_it_again(tmp_path: Path) -> None:
    checkpoint(str(tmp_path / "gone.db"))
    assert list(tmp_path.iterdir()) == []
