"""Publishing task messages: Celery's protocol-2 messages in kombu's Redis envelope, written
in one round trip without running kombu per message."""

from __future__ import annotations

import os
import re
import uuid
from base64 import b64encode
from bisect import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any, Final
from urllib.parse import urlsplit

import redis
from celery.utils.nodenames import anon_nodename
from kombu import serialization
from kombu.entity import maybe_delivery_mode
from kombu.transport.redis import Channel as RedisChannel
from kombu.utils.json import dumps as json_dumps
from redis.backoff import NoBackoff
from redis.retry import Retry

from resolver.broker.celery_app import CALLBACKS_QUEUE, DELIVER, JOBS_QUEUE, RUN_JOB, get_celery


@dataclass(frozen=True)
class Message:
    """A task message: the task's name, its arguments (ids only), its queue and its id."""

    task: str
    args: tuple[int, ...]
    queue: str
    task_id: str | None = None


def job_message(job_id: int, message_id: str) -> Message:
    return Message(RUN_JOB, (job_id,), JOBS_QUEUE, message_id)


def callback_message(callback_id: int) -> Message:
    return Message(DELIVER, (callback_id,), CALLBACKS_QUEUE)


class UnsupportedSettingError(RuntimeError):
    """A setting under which kombu would write another message than the one built here."""


# Stands in for a per-message value while a template is rendered; never in a message.
_MARK: Final = f"outbox-{uuid.uuid4().hex}"
_MARKED: Final = re.compile(f'"{_MARK}-(\\w+)"')
# The values of a message in the order its envelope holds them (checked by `_slotted`).
_SLOTS: Final = ("body", "task_id", "task_id", "argsrepr", "task_id", "delivery_tag")
# The embedded part of a protocol-2 body: no workflow (callbacks, chain, chord).
_EMBED: Final = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def _marker(name: str) -> str:
    return f"{_MARK}-{name}"


@dataclass(frozen=True)
class _Template:
    """One task's messages on one queue, rendered once by kombu with markers where the values of
    each message go. Filling them in costs a fraction of running kombu's encoders per message."""

    key: str
    envelope: str
    """kombu's JSON with a %s for each of `_SLOTS` (a JSON string)."""
    body_head: str
    body_tail: str
    """The serialized body either side of its arguments."""

    def render(self, task_id: str, args: Sequence[int], delivery_tag: str) -> str:
        # repr and JSON agree on a list of ints ("[1, 2]"); int.__repr__ refuses anything else.
        args_text = "[" + ", ".join(map(int.__repr__, args)) + "]"
        body = b64encode((self.body_head + args_text + self.body_tail).encode()).decode()
        quoted_id = encode_basestring_ascii(task_id)
        argsrepr = encode_basestring_ascii(args_text)
        values = (f'"{body}"', quoted_id, quoted_id, argsrepr, quoted_id, f'"{delivery_tag}"')
        return self.envelope % values


def _slotted(rendered: str) -> str:
    """The rendered envelope as a %-format: each marker becomes a %s, in `_SLOTS` order."""
    found = tuple(_MARKED.findall(rendered))
    if found != _SLOTS:
        raise AssertionError(f"the envelope holds {found}, not {_SLOTS}")
    return _MARKED.sub("%s", rendered.replace("%", "%%"))


def _headers(task: str, origin: str) -> dict[str, Any]:
    """`as_task_v2`'s headers for a message sent outside any task, with no options."""
    return {
        "lang": "py",
        "task": task,
        "id": _marker("task_id"),
        "shadow": None,
        "eta": None,
        "expires": None,
        "group": None,
        "group_index": None,
        "retries": 0,
        "timelimit": [None, None],
        "root_id": _marker("task_id"),
        "parent_id": None,
        "argsrepr": _marker("argsrepr"),
        "kwargsrepr": "{}",
        "origin": origin,
        "ignore_result": True,
        "replaced_task_nesting": 0,
        "stamped_headers": None,
        "stamps": {},
    }


# Transport options kombu reads only when consuming, those that shape what it writes, and those
# of its Redis connection (redis-py's own keywords).
_CONSUMER_OPTIONS: Final = frozenset(
    {
        "visibility_timeout",
        "unacked_restore_interval",
        "unacked_restore_throttle",
        "unacked_restore_limit",
        "unacked_mutex_expire",
        "queue_order_strategy",
    }
)
_SHAPING_OPTIONS: Final = frozenset({"sep", "priority_steps", "global_keyprefix", "body_encoding"})
_CONNECTION_OPTIONS: Final = frozenset(
    {
        "socket_timeout",
        "socket_connect_timeout",
        "socket_keepalive",
        "socket_keepalive_options",
        "max_connections",
        "health_check_interval",
        "client_name",
    }
)


def _check_supported(conf: Any) -> None:
    """Raise unless kombu, under these settings, writes what `_Publisher` writes."""
    options = conf.broker_transport_options
    required = {
        "task_protocol": (conf.task_protocol, 2),
        "task_serializer": (conf.task_serializer, "json"),
        "task_compression": (conf.task_compression, None),
        "body_encoding": (options.get("body_encoding", "base64"), "base64"),
    }
    for name, (value, supported) in required.items():
        if value != supported:
            raise UnsupportedSettingError(f"{name}={value!r}: the outbox writes {supported!r}")
    unknown = set(options) - _CONSUMER_OPTIONS - _SHAPING_OPTIONS - _CONNECTION_OPTIONS
    if unknown:
        raise UnsupportedSettingError(f"broker transport options {sorted(unknown)}")
    if urlsplit(conf.broker_url or "").scheme not in ("redis", "rediss"):
        raise UnsupportedSettingError("the outbox writes to a redis:// or rediss:// broker only")


def _check_queue(queue: Any) -> None:
    if queue.exchange.type != "direct":
        raise UnsupportedSettingError(f"queue {queue.name}: only direct exchanges are supported")
    if queue.expires is not None or "x-expires" in (queue.queue_arguments or {}):
        raise UnsupportedSettingError(f"queue {queue.name}: kombu would also expire its lists")


class _Publisher:
    """Writes Celery protocol-2 messages in kombu's Redis envelope straight to the queue lists.

    The messages, and the lists they go to, are those `send_task_message` and kombu's Redis
    channel write under these settings (the tests compare them); a setting under which kombu
    would write otherwise raises `UnsupportedSettingError` on first use.
    """

    def __init__(self, app: Any) -> None:
        _check_supported(app.conf)
        options = app.conf.broker_transport_options
        self.app = app
        self.origin = anon_nodename()
        self.sep: str = options.get("sep", RedisChannel.sep)
        self.priority_steps: list[int] = options.get("priority_steps", RedisChannel.priority_steps)
        self.key_prefix: str = options.get("global_keyprefix", RedisChannel.global_keyprefix)
        self.templates: dict[tuple[str, str], _Template] = {}
        connection = {k: v for k, v in options.items() if k in _CONNECTION_OPTIONS}
        # One immediate retry reconnects a connection Redis dropped (should it replay a write that
        # went through, a duplicate message is harmless). More would hold up the caller, and the
        # reconciler sends whatever this could not.
        retry = Retry(NoBackoff(), 1)
        self.client = redis.Redis.from_url(app.conf.broker_url, retry=retry, **connection)

    def template(self, task: str, queue: str) -> _Template:
        template = self.templates.get((task, queue))
        if template is None:
            template = self.templates[task, queue] = self._render_template(task, queue)
        return template

    def _render_template(self, task: str, queue_name: str) -> _Template:
        queue = self.app.amqp.queues[queue_name]  # created when missing, as Celery does
        _check_queue(queue)
        content_type, content_encoding, body = serialization.dumps(
            (_marker("args"), {}, _EMBED), serializer="json"
        )
        body_head, body_tail = body.split(json_dumps(_marker("args")))
        delivery_mode = queue.exchange.delivery_mode or self.app.conf.task_default_delivery_mode
        message = {
            "body": _marker("body"),
            "content-encoding": content_encoding,
            "content-type": content_type,
            "headers": _headers(task, self.origin),
            "properties": {
                "correlation_id": _marker("task_id"),
                "reply_to": "",
                "delivery_mode": maybe_delivery_mode(delivery_mode),
                # A direct exchange is published to as the anonymous one, the queue its key.
                "delivery_info": {"exchange": "", "routing_key": queue_name},
                "priority": RedisChannel.default_priority,
                "body_encoding": "base64",
                "delivery_tag": _marker("delivery_tag"),
            },
        }
        envelope = _slotted(json_dumps(message))
        return _Template(self.list_key(queue_name), envelope, body_head, body_tail)

    def list_key(self, queue: str) -> str:
        """kombu's `_q_for_pri` for a message of the default priority (behind the prefix)."""
        steps = self.priority_steps
        step = steps[bisect(steps, RedisChannel.default_priority) - 1]
        return f"{self.key_prefix}{queue}{self.sep}{step}" if step else self.key_prefix + queue

    def send(self, messages: Sequence[Message]) -> None:
        """One LPUSH per list, all in one pipeline: one round trip, the messages in order."""
        fresh_ids = iter(_random_uuids(len(messages) + sum(not m.task_id for m in messages)))
        by_key: dict[str, list[str]] = {}
        for message in messages:
            template = self.template(message.task, message.queue)
            task_id = message.task_id or next(fresh_ids)
            envelope = template.render(task_id, message.args, next(fresh_ids))
            by_key.setdefault(template.key, []).append(envelope)
        with self.client.pipeline(transaction=False) as pipe:
            for key, envelopes in by_key.items():
                pipe.lpush(key, *envelopes)
            pipe.execute()


def _random_uuids(count: int) -> list[str]:
    """`count` times `str(uuid.uuid4())`, as Celery and kombu make ids, from one urandom read."""
    raw = bytearray(os.urandom(16 * count))
    ids = []
    for start in range(0, 16 * count, 16):
        raw[start + 6] = raw[start + 6] & 0x0F | 0x40  # version 4
        raw[start + 8] = raw[start + 8] & 0x3F | 0x80  # the RFC 4122 variant
        hex_ = raw[start : start + 16].hex()
        ids.append(f"{hex_[:8]}-{hex_[8:12]}-{hex_[12:16]}-{hex_[16:20]}-{hex_[20:]}")
    return ids


_publisher: _Publisher | None = None


def _current_publisher() -> _Publisher:
    """The publisher for this process and the current Celery app, built on first use."""
    global _publisher
    app = get_celery()
    if _publisher is None or _publisher.app is not app:
        _publisher = _Publisher(app)
    return _publisher


def _forget_publisher() -> None:
    # A forked child must not share the parent's connections (nor its pid in `origin`).
    global _publisher
    _publisher = None


os.register_at_fork(after_in_child=_forget_publisher)


def send_messages(messages: Sequence[Message]) -> None:
    """Publish messages in one Redis round trip; raises when Redis fails.

    No result is kept: the database holds state. When Redis fails, any message not sent is
    republished by the reconciler.
    """
    if messages:
        _current_publisher().send(messages)


def publish_callback(callback_id: int, countdown: float | None = None) -> None:
    """Send a recorded (committed) callback to the callbacks queue."""
    get_celery().send_task(DELIVER, args=[callback_id], queue=CALLBACKS_QUEUE, countdown=countdown)


def send_task(name: str, args: Sequence[int | str], queue: str) -> None:
    """Send one task message by name (housekeeping: a schedules file to read again)."""
    get_celery().send_task(name, args=list(args), queue=queue)
