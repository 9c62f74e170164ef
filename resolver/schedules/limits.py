"""How many scheduled runs may start: per repository and for the whole service. Pure.

Renovate's prHourlyLimit and prConcurrentLimit, applied to runs: runs per hour, runs at once,
and open pull requests. A run over a limit is not dropped: it waits, and says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from resolver.core.settings import Settings
from resolver.schedules.spec import LIMIT_KEYS


@dataclass(frozen=True)
class Limits:
    runs_per_hour: int
    concurrent_runs: int
    open_prs: int


def service_limits(settings: Settings) -> Limits:
    """The whole service's limits (`RESOLVER_SCHEDULE_*`)."""
    return Limits(
        runs_per_hour=settings.schedule_runs_per_hour,
        concurrent_runs=settings.schedule_concurrent_runs,
        open_prs=settings.schedule_open_prs,
    )


def repo_defaults(settings: Settings) -> Limits:
    """A repository's limits where its operator set none (`RESOLVER_SCHEDULE_REPO_*`)."""
    return Limits(
        runs_per_hour=settings.schedule_repo_runs_per_hour,
        concurrent_runs=settings.schedule_repo_concurrent_runs,
        open_prs=settings.schedule_repo_open_prs,
    )


@dataclass(frozen=True)
class Usage:
    """What is in use now: runs started in the last hour, runs not yet finished, and pull
    requests open or about to be (runs in flight that may open one)."""

    runs_last_hour: int
    running: int
    open_prs: int


def repo_limits(
    operator: Mapping[str, int | None], from_file: Mapping[str, int], defaults: Limits
) -> Limits:
    """The operator's limits for a repository (`defaults` where unset), tightened by its file."""
    values = {key: operator.get(key) or getattr(defaults, key) for key in LIMIT_KEYS}
    for key, value in from_file.items():
        if key in values:
            values[key] = min(int(values[key]), value)
    return Limits(**values)


def blocking(limits: Limits, usage: Usage, scope: str, may_open_pull: bool) -> str | None:
    """Why a run may not start now (`scope` names whose limit: "the repository's"), or None."""
    if usage.running >= limits.concurrent_runs:
        return f"{scope} limit of {_count(limits.concurrent_runs, 'run')} at once"
    if usage.runs_last_hour >= limits.runs_per_hour:
        return f"{scope} limit of {_count(limits.runs_per_hour, 'run')} per hour"
    if may_open_pull and usage.open_prs >= limits.open_prs:
        return f"{scope} limit of {_count(limits.open_prs, 'open pull request')}"
    return None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
