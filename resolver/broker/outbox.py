"""The job outbox: publish after commit, and what is waiting on the jobs queue."""

from __future__ import annotations

import json
import logging
from collections.abc import Container, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import redis

from resolver.broker.celery_app import ACKNOWLEDGE, CALLBACKS_QUEUE, DELIVER, JOBS_QUEUE, QUEUES
from resolver.broker.publish import job_message, send_messages
from resolver.core.logs import log
from resolver.store import jobs
from resolver.store.jobs import new_message_id

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


def send_job_message(job_id: int, message_id: str) -> None:
    """Put the job's message on the jobs queue."""
    send_messages([job_message(job_id, message_id)])


def publish_job(session: Session, job_id: int) -> str:
    """Send the job's message under a new id, noted on the row first. The row must be
    committed. Noted after the send, the id could land after a worker had already taken the
    message and parked the job (`slots.park`): the job then looked published, no message of it
    waited, and it sat until the reconciler's grace ran out. Should the send fail, the row
    names a message that never went, which the reconciler republishes as it does a lost one."""
    message_id = new_message_id()
    jobs.mark_published(session, job_id, message_id)
    session.commit()
    send_job_message(job_id, message_id)
    log(logger, logging.INFO, "job.published", job=job_id, message=message_id)
    return message_id


def _headers_of(raw_messages: Iterable[bytes | str]) -> Iterator[dict[str, Any]]:
    """Each message's Celery headers; what does not read as one is passed over."""
    for raw in raw_messages:
        try:
            data = json.loads(raw)
        except (ValueError, TypeError):
            continue
        message = data[0] if isinstance(data, list) and data else data
        headers = message.get("headers") if isinstance(message, dict) else None
        if isinstance(headers, dict):
            yield headers


def _ids_in(raw_messages: Iterable[bytes | str], tasks: Container[str] | None) -> set[str]:
    ids = set()
    for headers in _headers_of(raw_messages):
        task_id = headers.get("id")
        if task_id and (tasks is None or headers.get("task") in tasks):
            ids.add(str(task_id))
    return ids


def _waiting(client: redis.Redis, queue: str) -> Iterator[bytes | str]:
    """The raw messages waiting in the queue's lists (every priority level)."""
    for key in client.scan_iter(match=f"{queue}*"):
        if client.type(key) in (b"list", "list"):
            yield from client.lrange(key, 0, -1)


def waiting_message_ids(
    client: redis.Redis, queue: str = JOBS_QUEUE, tasks: Container[str] | None = None
) -> set[str]:
    """Task ids still waiting in the queue's lists (every priority level), of `tasks` only
    when given."""
    return _ids_in(_waiting(client, queue), tasks)


def waiting_callbacks(url: str) -> set[int]:
    """The callbacks whose `deliver` message waits on the callbacks queue in the Redis at
    `url` now (its one argument, as its `argsrepr` header writes it: `[12]`)."""
    client = redis.Redis.from_url(url)
    try:
        ids: set[int] = set()
        for headers in _headers_of(_waiting(client, CALLBACKS_QUEUE)):
            args = headers.get("argsrepr")
            if headers.get("task") != DELIVER or not isinstance(args, str):
                continue
            number = args.strip("[]() ,")
            if number.isascii() and number.isdigit():
                ids.add(int(number))
        return ids
    finally:
        client.close()


def waiting_job_messages(url: str) -> set[str]:
    """The ids of the job messages waiting in the Redis at `url` now: on the jobs queue, or
    still on the callbacks queue as a new job's acknowledgement (which sends the job's message
    under the same id once it has sent the 👀)."""
    client = redis.Redis.from_url(url)
    try:
        acknowledgements = waiting_message_ids(client, CALLBACKS_QUEUE, {ACKNOWLEDGE})
        return waiting_message_ids(client, JOBS_QUEUE) | acknowledgements
    finally:
        client.close()


def queue_lengths(url: str) -> dict[str, int]:
    """Messages waiting in each queue (every priority level of it) in the Redis at `url`."""
    client = redis.Redis.from_url(url, socket_timeout=2)
    try:
        lengths = {}
        for queue in QUEUES:
            keys = [
                k
                for k in client.scan_iter(match=f"{queue}*")
                if client.type(k) in (b"list", "list")
            ]
            lengths[queue] = sum(int(client.llen(key)) for key in keys)
        return lengths
    finally:
        client.close()
