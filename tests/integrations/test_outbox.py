"""The outbox writes what Celery and kombu would write, in one round trip, and a worker runs it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.connection import Connection

from resolver.broker.celery_app import CALLBACKS_QUEUE, DEFAULT_QUEUE, DELIVER, get_celery
from resolver.broker.publish import (
    Message,
    UnsupportedSettingError,
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
from tests.foundation import procs
from tests.foundation.test_worker import spawn  # noqa: F401 - a fixture

MESSAGES = [
    job_message(41, f"job-{uuid.uuid4().hex}"),
    job_message(42, f"job-{uuid.uuid4().hex}"),
    Message(DELIVER, (7,), CALLBACKS_QUEUE, str(uuid.uuid4())),
    Message("resolver.reconcile", (3, 4), DEFAULT_QUEUE, str(uuid.uuid4())),
]


def send_with_celery(messages: Sequence[Message]) -> None:
    """Celery's own message (`as_task_v2`) published by kombu's producer: what `send_task`
    writes, less the reply_to it adds for a result that these tasks never store."""
    app = get_celery()
    with app.producer_or_acquire() as producer:
        for message in messages:
            task = app.amqp.as_task_v2(
                message.task_id, message.task, args=list(message.args), ignore_result=True
            )
            app.amqp.send_task_message(
                producer, message.task, task, queue=message.queue, declare=[]
            )


def drain(client: redis.Redis) -> dict[str, list[dict[str, Any]]]:
    """Every list in the test database, oldest message first (the order workers take them)."""
    lists = {}
    for key in client.scan_iter():
        if client.type(key) == b"list":
            lists[key.decode()] = [json.loads(raw) for raw in reversed(client.lrange(key, 0, -1))]
            client.delete(key)
    return lists


def without_delivery_tag(envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope less its delivery tag, a random id per message (checked apart)."""
    assert uuid.UUID(envelope["properties"]["delivery_tag"]).version == 4
    properties = {k: v for k, v in envelope["properties"].items() if k != "delivery_tag"}
    return {**envelope, "properties": properties}


def as_worker_reads(envelopes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as kombu hands them to a Celery worker: body decoded, headers, properties."""
    with get_celery().connection_for_read() as connection:
        channel = connection.default_channel
        messages = [channel.Message(envelope, channel=channel) for envelope in envelopes]
        return [
            {
                "payload": message.decode(),
                "headers": message.headers,
                "content_type": message.content_type,
                "content_encoding": message.content_encoding,
                "delivery_info": message.delivery_info,
                "properties": {k: v for k, v in message.properties.items() if k != "delivery_tag"},
            }
            for message in messages
        ]


@pytest.mark.parametrize(
    "transport_options",
    [{}, {"global_keyprefix": "tenant:", "sep": ":", "priority_steps": [3, 6]}],
    ids=["resolver-settings", "prefixed-stepped-lists"],
)
def test_the_outbox_writes_what_celery_and_kombu_write(
    resolver_env, transport_options: dict[str, Any]
) -> None:
    conf = get_celery().conf
    conf.broker_transport_options = {**conf.broker_transport_options, **transport_options}
    client = redis.Redis.from_url(TEST_REDIS)
    send_with_celery(MESSAGES)
    expected = drain(client)
    send_messages(MESSAGES)
    written = drain(client)
    assert written.keys() == expected.keys()
    assert len(written) == 3  # one list per queue, named as kombu names it
    for key, envelopes in expected.items():
        assert [without_delivery_tag(e) for e in written[key]] == [
            without_delivery_tag(e) for e in envelopes
        ]
        assert as_worker_reads(written[key]) == as_worker_reads(envelopes)


def test_a_callback_message_gets_a_fresh_task_id_each_time(resolver_env) -> None:
    client = redis.Redis.from_url(TEST_REDIS)
    send_messages([callback_message(7), callback_message(7)])
    [first, second] = drain(client)[CALLBACKS_QUEUE]
    ids = {first["headers"]["id"], second["headers"]["id"]}
    assert len(ids) == 2 and all(uuid.UUID(i).version == 4 for i in ids)
    assert first["properties"]["correlation_id"] == first["headers"]["root_id"]


@pytest.mark.parametrize(
    "setting",
    [
        {"task_compression": "gzip"},
        {"task_serializer": "pickle"},
        {"broker_transport_options": {"body_encoding": None}},
        {"broker_transport_options": {"retry_on_timeout": True}},
    ],
)
def test_a_setting_kombu_would_write_otherwise_under_fails_loudly(
    resolver_env, setting: dict[str, Any]
) -> None:
    get_celery().conf.update(setting)
    with pytest.raises(UnsupportedSettingError):
        send_messages([callback_message(7)])
    assert drain(redis.Redis.from_url(TEST_REDIS)) == {}


def test_a_batch_across_both_queues_is_one_round_trip(
    resolver_env, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = redis.Redis.from_url(TEST_REDIS)
    send_messages([callback_message(0)])  # connects: the handshake has round trips of its own
    drain(client)
    batch = [job_message(n, f"job-{n}") for n in range(16)]
    batch += [callback_message(n) for n in range(14)]
    writes: list[object] = []
    send_packed_command = Connection.send_packed_command

    def counted(self: Connection, command: object, check_health: bool = True) -> None:
        writes.append(command)
        send_packed_command(self, command, check_health)

    monkeypatch.setattr(Connection, "send_packed_command", counted)
    send_messages(batch)
    monkeypatch.undo()
    assert len(writes) == 1
    lists = drain(client)
    assert [e["headers"]["argsrepr"] for e in lists["jobs"]] == [f"[{n}]" for n in range(16)]
    assert [e["headers"]["argsrepr"] for e in lists["callbacks"]] == [f"[{n}]" for n in range(14)]


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
        payload = {"script": ["ok"], "calls": str(tmp / "calls.txt")}
        callback = record_callback(session, "test-forge", "post_comment", payload)
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
        assert sent is not None and sent.result == {"comment_id": 7}
