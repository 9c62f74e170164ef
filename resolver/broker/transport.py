"""kombu's Redis transport, less a client built per command.

kombu's channel builds a new `redis.Redis` for each publish and each queue operation (its
`conn_or_acquire`); building one fills a table of about 170 reply parsers, a quarter of the CPU
a lone task message cost the ingress (bench/ingress). A `redis.Redis` borrows a connection from
its pool for each command, so one per channel pool serves every thread. It is built again when
the channel gets a new pool: after a fork (kombu drops the parent's pool in the child) and after
the channel reconnects.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):  # type: ignore[misc]
    _sync_client: Any = None

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        if client:
            yield client
            return
        pool = self.pool
        cached = self._sync_client
        if cached is None or cached.connection_pool is not pool:
            cached = self._sync_client = self._create_client()
        yield cached


class Transport(kombu_redis.Transport):  # type: ignore[misc]
    Channel = Channel
