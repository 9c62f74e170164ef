"""The Celery application: Redis broker, late acks, separate queues, beat schedule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from celery import Celery
from celery.signals import after_setup_logger, after_setup_task_logger
from kombu import Queue

from resolver.broker.transport import Transport
from resolver.core.settings import Settings

JOBS_QUEUE = "jobs"
CALLBACKS_QUEUE = "callbacks"
DEFAULT_QUEUE = "default"
QUEUES = (JOBS_QUEUE, CALLBACKS_QUEUE, DEFAULT_QUEUE)

# Task names are the wire contract with messages already queued: never rename one.
RUN_JOB: Final = "resolver.run_job"
DELIVER: Final = "resolver.callbacks.deliver"
ACKNOWLEDGE: Final = "resolver.callbacks.acknowledge"
RECONCILE: Final = "resolver.reconcile"
REAP_SANDBOXES: Final = "resolver.reap_sandboxes"
SCHEDULES_TICK: Final = "resolver.schedules.tick"
PRUNE_TRAJECTORIES: Final = "resolver.retention.prune"
SCHEDULES_SYNC: Final = "resolver.schedules.sync"


def celery_config(settings: Settings) -> dict[str, Any]:
    """Every Celery setting in one place, derived from Resolver's settings."""
    transport = {
        # Above the longest hard time limit, or a long job is handed out twice.
        "visibility_timeout": settings.visibility_timeout,
        # Sweep for abandoned messages every second instead of every ~100 s.
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }
    return {
        "broker_url": settings.redis_url,
        **_transport(settings.redis_url),
        "result_backend": settings.redis_url,
        "broker_transport_options": transport,
        "result_backend_transport_options": {"visibility_timeout": settings.visibility_timeout},
        "broker_connection_retry_on_startup": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_default_queue": DEFAULT_QUEUE,
        "task_queues": [Queue(name) for name in QUEUES],
        "task_routes": {
            RUN_JOB: {"queue": JOBS_QUEUE},
            "resolver.callbacks.*": {"queue": CALLBACKS_QUEUE},
        },
        # The run_job hard limit is the one the visibility timeout is measured against.
        "task_annotations": {
            RUN_JOB: {
                # A backstop for the prefork pool; the job's heartbeat stops it first.
                "time_limit": settings.job_time_limit + 60,
                "soft_time_limit": settings.job_time_limit + 30,
            }
        },
        "worker_hijack_root_logger": False,
        "worker_send_task_events": False,
        # Periodic duties never expire unrun: the callbacks worker serves their queue, which
        # no long job can occupy, and each duty is safe to run twice.
        "beat_schedule": {
            "reconcile": {
                "task": RECONCILE,
                "schedule": settings.reconcile_interval,
                "options": {"queue": DEFAULT_QUEUE},
            },
            "reap-sandboxes": {
                "task": REAP_SANDBOXES,
                "schedule": float(settings.sandbox_reap_interval),
                "options": {"queue": DEFAULT_QUEUE},
            },
            # Due schedules are recorded once per slot whichever beat ticks (the run's key).
            "schedules-tick": {
                "task": SCHEDULES_TICK,
                "schedule": settings.reconcile_interval,
                "options": {"queue": DEFAULT_QUEUE},
            },
            # Hourly; it does nothing unless RESOLVER_RETENTION_DAYS is set.
            "prune-trajectories": {
                "task": PRUNE_TRAJECTORIES,
                "schedule": 3600.0,
                "options": {"queue": DEFAULT_QUEUE},
            },
        },
        "timezone": "UTC",
    }


def _transport(redis_url: str) -> dict[str, Any]:
    """Plain `redis://` goes through broker.transport, which reuses its Redis client. kombu
    reads more from the other schemes' names (`rediss://` turns TLS on), so they keep its own."""
    if redis_url.startswith("redis://"):
        return {"broker_transport": Transport}
    return {}


def make_celery(settings: Settings) -> Celery:
    app = Celery("resolver", include=["resolver.tasks"])  # every task is defined there
    app.conf.update(celery_config(settings))
    return app


_app: Celery | None = None
_settings: Callable[[], Settings] | None = None


def use_settings(settings: Callable[[], Settings]) -> None:
    """Say where this process's Celery app reads its settings (the broker's URL, the time
    limits, the log level): each composition root (the HTTP app, the Celery tasks, the command
    line) hands over a reading of them, read when the app is first built."""
    global _settings
    _settings = settings


def _read_settings() -> Settings:
    if _settings is None:
        raise RuntimeError("no settings: the process's composition root calls use_settings")
    return _settings()


def get_celery() -> Celery:
    """The process-wide Celery app, built on first use so imports never read settings."""
    global _app
    if _app is None:
        _app = make_celery(_read_settings())
    return _app


@after_setup_logger.connect
@after_setup_task_logger.connect
def _redacting_logs(**_kwargs: Any) -> None:
    from resolver.core.logs import configure_logging

    settings = _read_settings()
    configure_logging(settings.log_level, settings.log_format)
