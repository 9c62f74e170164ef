"""The schedules' Celery tasks: the beat's tick, and re-reading a repository's schedules file.

Thin, as every task: the work is in `queue.tick` and `sync.sync_repo`.
"""

from __future__ import annotations

from typing import Final

from celery import shared_task

from resolver.broker.celery_app import DEFAULT_QUEUE
from resolver.schedules import queue, sync
from resolver.store.db import session_scope
from resolver.store.models import utcnow

TICK: Final = "resolver.schedules.tick"
SYNC: Final = "resolver.schedules.sync"


def tick() -> list[int]:
    """Start the runs that are due (within the limits); send stale schedule files to be read."""
    now = utcnow()
    started = queue.tick(now)
    with session_scope() as session:
        stale = sync.claim_stale(session, now)
    for repo_id in stale:
        sync_task.apply_async(args=[repo_id], queue=DEFAULT_QUEUE)
    return started


def sync_one(repo_id: int) -> list[str]:
    return sync.sync_repo(int(repo_id))


# Registered by call rather than as decorators: Celery's decorators are untyped.
tick_task = shared_task(name=TICK, max_retries=0, time_limit=60, soft_time_limit=50)(tick)
sync_task = shared_task(name=SYNC, max_retries=0, time_limit=300, soft_time_limit=280)(sync_one)
