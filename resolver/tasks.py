"""The Celery composition root: every task, each thin (ids in, work elsewhere).

Both workers load this module: the one that runs jobs and the callbacks worker. What runs a job
(`resolver.runners`: the agent, its model client, the sandbox) is loaded by the job task itself,
so the callbacks worker starts without it.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any, Final

from celery import Task, shared_task
from celery.signals import worker_init
from celery.worker.control import inspect_command

from integrations import registry
from resolver import observability
from resolver.broker import celery_app, locks
from resolver.broker.celery_app import (
    ACKNOWLEDGE,
    DELIVER,
    PRUNE_TRAJECTORIES,
    REAP_SANDBOXES,
    RECONCILE,
    RUN_JOB,
    SCHEDULES_SYNC,
    SCHEDULES_TICK,
    get_celery,
)
from resolver.callbacks.acknowledge import acknowledge
from resolver.callbacks.send import send
from resolver.core import metrics, tracing, version
from resolver.core.logs import log, register_secret
from resolver.core.settings import Settings, get_settings
from resolver.schedules import beat
from resolver.store import configured, db, jobs, retention
from resolver.store.db import session_scope
from resolver.worker.reconcile import reconcile

logger = logging.getLogger(__name__)

get_settings.compose(registry.settings_classes)  # each installed provider's settings
get_settings.mask_with(register_secret)  # the settings' secrets, masked in every log line
configured.install()  # app credentials and webhook secrets stored by /setup
# Where the store and the broker read their settings: when first asked, never at import.
db.use_database(lambda: get_settings().database_url)
celery_app.use_settings(get_settings)


def __getattr__(name: str) -> Any:
    # `celery -A resolver.tasks:app` finds the app through this hook: the Celery root, which has
    # said where the settings are, builds it on first use.
    if name == "app":
        return get_celery()
    raise AttributeError(name)


@worker_init.connect
def _started(**_kwargs: object) -> None:
    """Traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: at the worker's start, not at import
    (a process may import the tasks long before it runs them). Then what the worker loaded is
    kept off the garbage collector's full passes, each of which stopped every task thread: 0.1 s
    in the callbacks worker, in the 👀 of whatever it was sending."""
    observability.install("resolver-worker")
    observability.freeze_what_started()


@shared_task(name=RUN_JOB, acks_late=True, reject_on_worker_lost=True, max_retries=0)
def run_job(job_id: int) -> None:
    # The runners load the agent, its model client and the sandbox: only a worker that runs a
    # job pays for them, never the callbacks worker that shares this module. What they load is
    # not frozen as the worker's start is: the last pass before a freeze would walk their
    # ~450,000 objects (a quarter of a second, every job thread held) as the first jobs start,
    # and bench/load.py --mentions 48 showed no gain from it either way.
    from resolver import runners
    from resolver.worker.execute import execute

    with tracing.follow_decision():  # a job not sampled makes no span
        execute(int(job_id), runners.runner_for, get_settings())


# No retry limit here: the attempt rows decide when to give up (`callbacks.send.MAX_TRIES`).
@shared_task(
    bind=True,
    name=DELIVER,
    acks_late=True,
    max_retries=None,
    time_limit=120,
    soft_time_limit=100,
)
def deliver(self: Task, callback_id: int) -> None:
    """Send one callback; a transient failure is tried again by Celery, after the wait that
    `send` computed (the provider's Retry-After, or backoff with jitter)."""
    with tracing.follow_decision():
        wait = send(int(callback_id), get_settings())
    if wait is not None:
        raise self.retry(countdown=wait)


@shared_task(name=ACKNOWLEDGE, acks_late=True, max_retries=0, time_limit=120, soft_time_limit=100)
def acknowledge_job(job_id: int) -> None:
    """A new job's one message from intake: its 👀, its job message, its first status."""
    acknowledge(int(job_id), get_settings())


def _first_in_slot(settings: Settings, duty: str, every: float | None = None) -> bool:
    """Beat runs on every host: a periodic duty runs once per slot (of `every` seconds, else
    the reconcile interval), whoever sent it."""
    slot = locks.claim_slot(settings.redis_url, duty, every or settings.reconcile_interval)
    if slot is None:
        log(logger, logging.INFO, "duty.skipped", duty=duty)
        return False
    log(logger, logging.INFO, "duty.ran", duty=duty, slot=slot)
    return True


@shared_task(name=RECONCILE, max_retries=0, time_limit=60, soft_time_limit=50)
def reconcile_task() -> list[int]:
    settings = get_settings()
    if not _first_in_slot(settings, "reconcile"):
        return []
    with session_scope() as session:
        return reconcile(session, settings)


@shared_task(name=REAP_SANDBOXES, max_retries=0, time_limit=300)
def reap_sandboxes() -> list[str]:
    """This worker's engine (each worker also sweeps its own: `resolver worker`)."""

    from sandbox import reap

    settings = get_settings()
    removed = list(reap(jobs.sandbox_is_stale, settings.sandbox_max_age, settings.deployment))
    metrics.REAPER_REMOVALS.inc(len(removed))
    return removed


@inspect_command(name="resolver_version")
def resolver_version(_state: object) -> dict[str, str]:
    """This worker's release, for `resolver db upgrade` (resolver.broker.versions)."""
    return {"version": version.current()}


RETENTION_BATCH: Final = 200  # jobs per transaction: a short write lock, intake goes on
RETENTION_BUDGET: Final = 240.0  # seconds per run; the next hour's run goes on from there


@shared_task(name=PRUNE_TRAJECTORIES, max_retries=0, time_limit=300, soft_time_limit=280)
def prune_trajectories() -> int:
    """Retention (RESOLVER_RETENTION_DAYS): prune finished jobs' trajectories in batches."""
    settings = get_settings()
    days = settings.retention_days
    if days is None or not _first_in_slot(settings, "prune-trajectories", 3600.0):
        return 0
    return prune_all(days, RETENTION_BATCH, RETENTION_BUDGET)


def prune_all(days: int, batch: int, budget: float) -> int:
    """Prune batch after batch until none is left or `budget` seconds have gone."""
    started = time.monotonic()
    before = retention.cutoff(datetime.now(UTC), days)
    total = 0
    while time.monotonic() - started < budget:
        with session_scope() as session:
            done = retention.prune_batch(session, before, batch)
        metrics.RETENTION_PRUNED_JOBS.inc(done.jobs)
        metrics.RETENTION_PRUNED_EVENTS.inc(done.events)
        total += done.jobs
        if done.jobs < batch:
            break
    log(logger, logging.INFO, "retention.pruned", jobs=total, days=days)
    return total


@shared_task(name=SCHEDULES_TICK, max_retries=0, time_limit=60, soft_time_limit=50)
def schedules_tick() -> list[int]:
    settings = get_settings()
    if not _first_in_slot(settings, "schedules-tick"):
        return []
    return beat.tick(settings)


@shared_task(name=SCHEDULES_SYNC, max_retries=0, time_limit=300, soft_time_limit=280)
def schedules_sync(repo_id: int) -> list[str]:
    settings = get_settings()
    return beat.sync_one(int(repo_id), settings.sandbox_workspace_root, settings)
