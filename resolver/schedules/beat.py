"""What the schedules do on the beat: the tick, and re-reading a repository's schedules file.

The Celery tasks that call these are in `resolver.tasks`.
"""

from __future__ import annotations

from pathlib import Path

from resolver.broker.celery_app import DEFAULT_QUEUE, SCHEDULES_SYNC
from resolver.broker.publish import send_task
from resolver.core.settings import Settings
from resolver.schedules import queue, sync
from resolver.schedules.store import in_transaction
from resolver.store.models import utcnow


def tick(settings: Settings) -> list[int]:
    """Start the runs that are due (within the limits); send stale schedule files to be read."""
    now = utcnow()
    started = queue.tick(settings, now)
    stale = in_transaction(sync.claim_stale, now)
    for repo_id in stale:
        send_task(SCHEDULES_SYNC, [repo_id], DEFAULT_QUEUE)
    return started


def sync_one(repo_id: int, workspace_root: Path, settings: Settings) -> list[str]:
    return sync.sync_repo(int(repo_id), workspace_root, settings)
