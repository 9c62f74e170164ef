"""The service's Prometheus series: defined once here, observed where things happen, exposed
by the web process at `/metrics` and by each worker on its own port (`resolver worker
--metrics-port`). Names follow Prometheus conventions: base units (seconds), `_total` for
counters. docs/reference/metrics.md lists them."""

from __future__ import annotations

from datetime import datetime
from typing import Final

from prometheus_client import Counter, Gauge, Histogram

# Seconds from a webhook to what its sender sees: 👀 within 2 s is the goal.
_LATENCY: Final = (0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)
_DURATION: Final = (5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200)
# A batch of webhook triggers is written in milliseconds; a slow database or broker shows here.
_INTAKE: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5)

ACKNOWLEDGE_SECONDS: Final = Histogram(
    "resolver_acknowledge_seconds",
    "From the webhook's arrival to the 👀 on the triggering message (sent).",
    buckets=_LATENCY,
)
JOB_START_SECONDS: Final = Histogram(
    "resolver_job_start_seconds",
    "From the webhook's arrival to its job starting on a worker.",
    buckets=_LATENCY,
)
JOB_DURATION_SECONDS: Final = Histogram(
    "resolver_job_duration_seconds",
    "How long a job ran, from its start to its end, by outcome.",
    ["outcome"],
    buckets=_DURATION,
)
LLM_TOKENS: Final = Counter(
    "resolver_llm_tokens_total", "LLM tokens of finished jobs, by kind.", ["kind"]
)
LLM_COST: Final = Counter("resolver_llm_cost_usd_total", "LLM cost of finished jobs, in USD.")
CALLBACK_ATTEMPTS: Final = Counter(
    "resolver_callback_attempts_total",
    "Tries of outbound callbacks, by action and outcome (ok, transient, permanent).",
    ["action", "outcome"],
)
CALLBACKS_FAILED: Final = Counter(
    "resolver_callbacks_failed_total",
    "Outbound callbacks that failed for good (refused, or still failing after their tries), "
    "by action: a review, a reply, a pull request that never reached the forge.",
    ["action"],
)
INTAKE_SECONDS: Final = Histogram(
    "resolver_intake_seconds",
    "Each batch of webhook triggers the web process wrote, by stage: record (its one database "
    "transaction) and publish (its messages to the broker).",
    ["stage"],
    buckets=_INTAKE,
)
INTAKE_BATCH_TRIGGERS: Final = Histogram(
    "resolver_intake_batch_triggers",
    "Webhook triggers per batch the web process wrote: above 1 when requests wait for a batch.",
    buckets=(1, 2, 4, 8, 16, 32, 64, 100),
)
IGNORED_EVENTS: Final = Counter(
    "resolver_ignored_events_total",
    "Webhook deliveries answered 204 without a row, by provider and reason.",
    ["provider", "reason"],
)
REAPER_REMOVALS: Final = Counter(
    "resolver_reaper_removals_total", "Sandboxes the reaper removed (dead, stale or too old)."
)
RETENTION_PRUNED_JOBS: Final = Counter(
    "resolver_retention_pruned_jobs_total",
    "Finished jobs whose trajectory retention pruned (RESOLVER_RETENTION_DAYS).",
)
RETENTION_PRUNED_EVENTS: Final = Counter(
    "resolver_retention_pruned_events_total", "Trajectory entries retention deleted."
)
QUEUE_MESSAGES: Final = Gauge(
    "resolver_queue_messages", "Messages waiting in each broker queue.", ["queue"]
)
QUEUE_OLDEST_SECONDS: Final = Gauge(
    "resolver_queue_oldest_age_seconds",
    "Age of the oldest work waiting on each queue (a queued job, a pending callback).",
    ["queue"],
)
SANDBOXES_RUNNING: Final = Gauge(
    "resolver_sandboxes_running", "This deployment's sandbox containers on the worker's engine."
)


def since(start: datetime | None, now: datetime) -> float | None:
    """Seconds from `start` to `now`, or None without a start."""
    return None if start is None else max(0.0, (now - start).total_seconds())
