"""The schedules' beat tick (schedules/beat.py) on the test database and Redis: the runs that
are due start, and each followed repository whose schedules file is stale is sent to be read
again, once, until its next turn."""

from __future__ import annotations

from datetime import timedelta

import redis

from resolver.broker.celery_app import DEFAULT_QUEUE, SCHEDULES_SYNC
from resolver.core.settings import get_settings
from resolver.schedules.beat import tick
from resolver.schedules.store import repository
from resolver.store.db import session_scope
from resolver.store.models import utcnow
from tests.broker.test_outbox import drain
from tests.conftest import TEST_REDIS, ResolverEnv
from tests.schedules.helpers import make_schedule, schedule_jobs


def sync_messages() -> list[str]:
    """The repository ids sent to be read, as the default queue holds them."""
    queues = drain(redis.Redis.from_url(TEST_REDIS))
    return [
        envelope["headers"]["argsrepr"]
        for envelope in queues.get(DEFAULT_QUEUE, [])
        if envelope["headers"]["task"] == SCHEDULES_SYNC
    ]


def test_a_due_run_starts_on_the_tick(resolver_env: ResolverEnv) -> None:
    make_schedule("hourly", cron="0 * * * *", created_at=utcnow() - timedelta(days=2))
    started = tick(get_settings())
    assert started == [job.id for job in schedule_jobs()] and len(started) == 1
    assert tick(get_settings()) == []


def test_a_followed_repositorys_file_is_sent_to_be_read_once_per_turn(
    resolver_env: ResolverEnv,
) -> None:
    with session_scope() as session:
        followed = repository(session, "octo/widgets")
        followed.follow_file = True
        repository(session, "octo/other")  # not followed: its schedules come from the CLI
        session.flush()
        followed_id = followed.id
    tick(get_settings())
    assert sync_messages() == [f"[{followed_id}]"]
    tick(get_settings())
    assert sync_messages() == []
