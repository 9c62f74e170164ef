"""A new job's one message from intake, on the callbacks side: the 👀 is sent at once, then the
job's message goes out under the id the reconciler looks for, then the first status is queued
ahead of every edit; a copy of the message sends nothing twice."""

from __future__ import annotations

import json
from typing import Any

import redis

from resolver.broker.celery_app import CALLBACKS_QUEUE, DELIVER, JOBS_QUEUE, RUN_JOB, get_celery
from resolver.broker.outbox import waiting_job_messages
from resolver.broker.publish import callback_message, publish_callback, send_messages
from resolver.callbacks.acknowledge import acknowledge
from resolver.callbacks.send import send
from resolver.contract.callbacks import Reaction, StatusUpdate
from resolver.core.settings import get_settings
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback
from tests.callbacks.test_actions import (  # noqa: F401 - `sixth` is a fixture
    Installed,
    new_callback,
    new_job,
    sixth,
)
from tests.conftest import TEST_REDIS


def acknowledged_job() -> tuple[int, int, int]:
    """A queued job with its 👀 and first status pending, as intake records them."""
    job_id = new_job()
    react = new_callback(Reaction(job_id=job_id), job_id)
    status = new_callback(StatusUpdate(job_id=job_id), job_id)
    return job_id, react, status


def state(callback_id: int) -> str:
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        assert callback is not None
        return callback.state


def taken_in_order(count: int) -> list[tuple[str, str]]:
    """The callbacks queue's messages in the order a worker takes them: (task, args)."""
    taken = []
    with get_celery().connection_for_read() as connection:
        queue = connection.SimpleQueue(CALLBACKS_QUEUE)
        for _ in range(count):
            message = queue.get(timeout=2)
            taken.append((message.headers["task"], message.headers["argsrepr"]))
            message.ack()
        queue.close()
    return taken


def test_the_eyes_go_first_then_the_job_then_the_status_ahead_of_any_edit(
    sixth: Installed,  # noqa: F811
) -> None:
    job_id, react, status = acknowledged_job()
    with session_scope() as session:
        message_id = jobs.get_job(session, job_id).message_id
    publish_callback(999)  # an edit of another job's status, already waiting
    acknowledge(job_id, get_settings())
    assert sixth.lines() == [{"op": "react", "id": "M1", "emoji": "eyes"}]
    assert (state(react), state(status)) == ("sent", "pending")
    assert waiting_job_messages(get_settings().redis_url) == {message_id}
    [job_message] = drain_queue(JOBS_QUEUE)
    assert (job_message["headers"]["task"], job_message["headers"]["argsrepr"]) == (
        RUN_JOB,
        f"[{job_id}]",
    )
    send_messages([callback_message(998)])  # another mention's 👀, published after
    assert taken_in_order(3) == [
        (DELIVER, "[998]"),
        (DELIVER, f"[{status}]"),
        (DELIVER, "[999]"),
    ]


def test_a_copy_of_the_message_sends_nothing_twice(sixth: Installed) -> None:  # noqa: F811
    job_id, react, status = acknowledged_job()
    acknowledge(job_id, get_settings())
    assert send(status, get_settings()) is None  # the worker took the first status
    acknowledge(job_id, get_settings())  # redelivered: the worker died before acking it
    assert [line["op"] for line in sixth.lines()] == ["react", "post"]
    assert (state(react), state(status)) == ("sent", "sent")


def drain_queue(queue: str) -> list[dict[str, Any]]:
    """The messages waiting in `queue`'s first priority step (its own list), oldest first."""
    client = redis.Redis.from_url(TEST_REDIS)
    return [json.loads(raw) for raw in reversed(client.lrange(queue, 0, -1))]
