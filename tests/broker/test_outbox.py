"""The outbox publishes through Celery's own API, and a worker runs what it sent."""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

import redis

from resolver.broker.celery_app import CALLBACKS_QUEUE, JOBS_QUEUE, RUN_JOB
from resolver.broker.outbox import publish_job, waiting_message_ids
from resolver.broker.publish import (
    callback_message,
    job_message,
    send_messages,
)
from resolver.core.states import JobState
from resolver.store import jobs
from resolver.store.callbacks import record_callback
from resolver.store.db import session_scope
from resolver.store.models import Callback
from tests.conftest import TEST_REDIS
from tests.support import procs
from tests.support.scripted_post import ScriptedPost
from tests.worker.test_execute import spawn  # noqa: F401 - a fixture


def drain(client: redis.Redis) -> dict[str, list[dict[str, Any]]]:
    """Every list in the test database, oldest message first (the order workers take them)."""
    lists = {}
    for key in client.scan_iter():
        if client.type(key) == b"list":
            lists[key.decode()] = [json.loads(raw) for raw in reversed(client.lrange(key, 0, -1))]
            client.delete(key)
    return lists


def test_a_job_message_carries_the_id_the_reconciler_looks_for(resolver_env) -> None:
    client = redis.Redis.from_url(TEST_REDIS)
    message_id = f"job-{uuid.uuid4().hex}"
    send_messages([job_message(41, message_id)])
    assert waiting_message_ids(client) == {message_id}
    [envelope] = drain(client)[JOBS_QUEUE]
    assert envelope["headers"]["task"] == RUN_JOB
    assert envelope["headers"]["argsrepr"] == "[41]"


def test_a_callback_message_gets_a_fresh_task_id_each_time(resolver_env) -> None:
    client = redis.Redis.from_url(TEST_REDIS)
    send_messages([callback_message(7), callback_message(7)])
    [first, second] = drain(client)[CALLBACKS_QUEUE]
    ids = {first["headers"]["id"], second["headers"]["id"]}
    assert len(ids) == 2 and all(uuid.UUID(i).version == 4 for i in ids)
    assert first["properties"]["correlation_id"] == first["headers"]["root_id"]


def test_a_worker_runs_the_job_and_the_callback_the_outbox_sent(
    resolver_env,
    spawn,  # noqa: F811
) -> None:
    tmp: Path = resolver_env.tmp
    marker = tmp / "marker.txt"
    with session_scope() as session:
        job = jobs.create_job(
            session,
            jobs.NewJob(
                source="test-sleep", task="t", trigger={"seconds": 0, "marker": str(marker)}
            ),
        )
        payload = ScriptedPost(script=("ok",), calls=str(tmp / "calls.txt"))
        callback = record_callback(session, "test-forge", payload)
    assert job.message_id is not None
    send_messages([job_message(job.id, job.message_id), callback_message(callback.id)])
    spawn("worker")

    def finished() -> bool:
        with session_scope() as session:
            done = jobs.get_job(session, job.id).state == JobState.SUCCEEDED
            sent = session.get(Callback, callback.id)
            return done and sent is not None and sent.state == "sent"

    procs.wait_until(finished, 60, "the job to succeed and the callback to be sent")
    assert marker.read_text().splitlines() == [f"done {job.id}"]
    with session_scope() as session:
        sent = session.get(Callback, callback.id)
        assert sent is not None and sent.result == {"v": 1, "message": {"comment_id": 7}}


def test_a_job_message_is_sent_only_once_its_id_is_committed(resolver_env) -> None:
    """A worker that takes the message at once finds the row naming it. Noted after the send,
    the id could land after the worker had parked the job, and undo the parking: the job then
    waited for the reconciler (seen under `make contend`). Here another writer holds the
    database for a second: a message sent meanwhile was sent before its id was written."""
    with session_scope() as session:
        job_id = jobs.create_job(session, jobs.NewJob(source="github", task="fix it")).id
    client = redis.Redis.from_url(TEST_REDIS)
    path = resolver_env.database_url.removeprefix("sqlite:///")
    seen: list[tuple[str, str | None]] = []
    holding = threading.Event()

    def worker() -> None:  # the message, then the row, as a worker reads them
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        holding.set()
        popped = client.blpop([JOBS_QUEUE], timeout=1)
        if popped is None:  # nothing was sent while the id could not be written
            holder.execute("ROLLBACK")
            popped = client.blpop([JOBS_QUEUE], timeout=10)
        assert popped is not None
        row = holder.execute("SELECT message_id FROM jobs WHERE id = ?", (job_id,)).fetchone()
        seen.append((json.loads(popped[1])["headers"]["id"], row[0]))
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()

    taking = threading.Thread(target=worker)
    taking.start()
    assert holding.wait(10)
    with session_scope() as session:
        sent = publish_job(session, job_id)
    taking.join(15)
    assert seen == [(sent, sent)]
