"""The transport reuses one Redis client per channel pool (building one per publish cost a
quarter of it), and messages published from many threads at once, and from a forked child,
all arrive."""

from __future__ import annotations

import os
import threading

import redis

from resolver.broker.celery_app import CALLBACKS_QUEUE, get_celery
from resolver.broker.publish import callback_message, send_messages
from tests.broker.test_outbox import drain
from tests.conftest import TEST_REDIS


def published() -> list[str]:
    return [
        m["headers"]["argsrepr"] for m in drain(redis.Redis.from_url(TEST_REDIS))[CALLBACKS_QUEUE]
    ]


def test_a_channel_keeps_its_redis_client(resolver_env) -> None:
    with get_celery().producer_or_acquire() as producer:
        with producer.channel.conn_or_acquire() as first:
            pass
        send_messages([callback_message(1)])
        with producer.channel.conn_or_acquire() as second:
            pass
    assert second is first
    assert published() == ["[1]"]


def test_threads_publishing_at_once_lose_nothing(resolver_env) -> None:
    def publish(first: int) -> None:
        for n in range(first, first + 50):
            send_messages([callback_message(n)])

    threads = [threading.Thread(target=publish, args=(t * 1000,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = {f"[{t * 1000 + n}]" for t in range(8) for n in range(50)}
    assert sorted(published()) == sorted(expected)


def test_a_forked_child_publishes_on_its_own_connections(resolver_env) -> None:
    send_messages([callback_message(1)])  # the parent's client and connections exist
    pid = os.fork()
    if pid == 0:  # the child: publish, and say how it went by its exit code
        try:
            send_messages([callback_message(2)])
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    send_messages([callback_message(3)])  # the parent's connection still works
    assert sorted(published()) == ["[1]", "[2]", "[3]"]
