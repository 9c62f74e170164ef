"""Redis: the one lock helper, a health check, and the error every Redis failure raises.

A lock lives `timeout` seconds unless renewed. Whoever holds a lock for long (a job's branch)
renews it from the job's heartbeat (`JobContext.on_beat`), so a killed worker's lock lapses as
its job's lease does; nobody runs a renew thread of their own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import redis
from redis.lock import Lock

from resolver.core.logs import log

logger = logging.getLogger(__name__)

BrokerError = redis.RedisError
"""Redis could not be reached, or refused the command."""


@dataclass
class Held:
    """A lock this process holds (`acquired`), or tried to (`acquired` False)."""

    name: str
    acquired: bool
    _lock: Lock

    def renew(self) -> None:
        """Give the lock its whole timeout again; a lock lost meanwhile is logged."""
        try:
            self._lock.reacquire()
        except redis.RedisError as error:
            log(
                logger,
                logging.WARNING,
                "lock.renew_failed",
                lock=self.name,
                error=type(error).__name__,
            )


@contextmanager
def held(name: str, redis_url: str, *, timeout: float, wait: float) -> Iterator[Held]:
    """Hold the lock `name` for the block, waiting at most `wait` seconds for it. Yields whether
    it was acquired; raises BrokerError when Redis cannot be reached."""
    client = redis.Redis.from_url(redis_url)
    try:
        lock = client.lock(name, timeout=timeout, blocking_timeout=wait, thread_local=False)
        handle = Held(name, bool(lock.acquire()), lock)
        try:
            yield handle
        finally:
            if handle.acquired:
                # Expired, or Redis gone: its timeout frees it either way.
                with suppress(redis.RedisError):
                    lock.release()
    finally:
        client.close()


def server_version(url: str, timeout: float = 2.0) -> str:
    """Redis's version, asked within `timeout` seconds; BrokerError when it does not answer."""
    client = redis.Redis.from_url(url, socket_timeout=timeout)
    try:
        return str(client.info("server").get("redis_version", "?"))
    finally:
        client.close()


def claim_slot(url: str, duty: str, every: float) -> int | None:
    """The current slot of `every` seconds when this caller is the first to run `duty` in it,
    else None: with two beats (two hosts), each periodic duty still runs once per slot. Raises
    BrokerError when Redis cannot be reached."""
    slot = int(time.time() // every)
    client = redis.Redis.from_url(url)
    try:
        key = f"resolver:duty:{duty}:{slot}"
        return slot if client.set(key, "1", nx=True, ex=max(1, int(every * 2))) else None
    finally:
        client.close()
