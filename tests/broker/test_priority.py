"""A mention's acknowledgements go before callbacks already waiting: a worker takes a message of
priority FIRST before every LATER one in the callbacks queue, whenever each was published."""

from __future__ import annotations

from resolver.broker.celery_app import CALLBACKS_QUEUE, get_celery
from resolver.broker.publish import callback_message, publish_callback, send_messages


def test_an_acknowledgement_is_taken_before_edits_published_earlier(resolver_env) -> None:
    publish_callback(1)  # status edits of running jobs, waiting
    publish_callback(2)
    send_messages([callback_message(3), callback_message(4)])  # two mentions' 👀, later

    taken = []
    with get_celery().connection_for_read() as connection:
        queue = connection.SimpleQueue(CALLBACKS_QUEUE)
        for _ in range(4):
            message = queue.get(timeout=2)  # the worker's order: the lowest priority step first
            taken.append(message.headers["argsrepr"])
            message.ack()
        queue.close()

    assert taken == ["[3]", "[4]", "[1]", "[2]"]
