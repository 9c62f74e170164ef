"""Shared spending caps: per repository per day, per requester per day, for the service per
month, in USD and in tokens (for models without a price). Pure: the store sums the spend.

A job reserves its own ceiling (its per-job limits) when it starts; it starts only if every
cap has room for that reservation on top of what was spent or reserved before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from resolver.core.settings import Settings

Scope = Literal["repository", "requester", "service"]
Unit = Literal["usd", "tokens"]
SCOPES: Final[tuple[Scope, ...]] = ("repository", "requester", "service")

BUDGET: Final = "budget"
"""The stop reason of a job that a shared cap stopped or never started."""


class InvalidBudgetError(ValueError):
    """`budget:` in .resolver/config.yml is not a mapping of positive numbers."""


@dataclass(frozen=True)
class Cap:
    """One operator (or repository) cap: how much one scope may spend in one period."""

    scope: Scope
    unit: Unit
    limit: float

    @property
    def period(self) -> Literal["day", "month"]:
        return "month" if self.scope == "service" else "day"


@dataclass(frozen=True)
class Spent:
    """Spend of one scope in its period: USD and tokens (spent, or reserved by running jobs)."""

    usd: float = 0.0
    tokens: int = 0

    def of(self, unit: Unit) -> float:
        return self.usd if unit == "usd" else float(self.tokens)


@dataclass(frozen=True)
class Refusal:
    """The cap a job would cross, what was spent against it, and when it resets."""

    cap: Cap
    spent: float
    needed: float
    resets_at: datetime

    def message(self, running: bool = False) -> str:
        what = f"{label(self.cap)} of {money(self.cap.unit, self.cap.limit)}"
        spent = money(self.cap.unit, self.spent)
        resets = self.resets_at.strftime("%Y-%m-%d %H:%M UTC")
        if running:
            return (
                f"Stopped: the {what} is spent ({spent} this {self.cap.period}). "
                f"It resets at {resets}."
            )
        return (
            f"The {what} has {spent} spent or reserved this {self.cap.period}, "
            f"and this job may spend up to {money(self.cap.unit, self.needed)}. "
            f"It resets at {resets}."
        )


REPO_KEYS: Final[Mapping[str, Unit]] = {"daily_usd": "usd", "daily_tokens": "tokens"}
"""Keys of `budget:` in `.resolver/config.yml`: they lower the repository's daily caps."""


def caps_from(settings: Settings, repo_config: Mapping[str, Any] | None = None) -> tuple[Cap, ...]:
    """The operator's caps, the repository's daily ones lowered by its config.

    A value above the operator's is ignored: the file is written by whoever can push, not by
    whoever pays. With no operator cap, the repository's own value applies.
    """
    configured: dict[tuple[Scope, Unit], float | None] = {
        ("repository", "usd"): settings.budget_repo_daily_usd,
        ("repository", "tokens"): settings.budget_repo_daily_tokens,
        ("requester", "usd"): settings.budget_requester_daily_usd,
        ("requester", "tokens"): settings.budget_requester_daily_tokens,
        ("service", "usd"): settings.budget_service_monthly_usd,
        ("service", "tokens"): settings.budget_service_monthly_tokens,
    }
    for key, unit in REPO_KEYS.items():
        own = repo_budget(repo_config).get(key)
        if own is not None:
            operator = configured[("repository", unit)]
            configured[("repository", unit)] = own if operator is None else min(operator, own)
    return tuple(
        Cap(scope, unit, limit) for (scope, unit), limit in configured.items() if limit is not None
    )


def repo_budget(repo_config: Mapping[str, Any] | None) -> dict[str, float]:
    """The repository's `budget:` mapping, checked; InvalidBudgetError names what is wrong."""
    found = (repo_config or {}).get("budget")
    if found is None:
        return {}
    if not isinstance(found, Mapping):
        raise InvalidBudgetError("budget in .resolver/config.yml must be a mapping")
    values: dict[str, float] = {}
    for key, value in found.items():
        if key not in REPO_KEYS:
            known = ", ".join(REPO_KEYS)
            raise InvalidBudgetError(f"budget.{key} in .resolver/config.yml is unknown ({known})")
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise InvalidBudgetError(
                f"budget.{key} in .resolver/config.yml must be a positive number"
            )
        values[str(key)] = float(value)
    return values


def window(scope: Scope, now: datetime) -> tuple[datetime, datetime]:
    """The period a scope's cap counts (UTC day, or UTC month for the service): start, reset."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if scope != "service":
        return day, day + timedelta(days=1)
    month = day.replace(day=1)
    following = (month + timedelta(days=32)).replace(day=1)
    return month, following


def refuse_start(
    caps: tuple[Cap, ...], spent: Mapping[Scope, Spent], reserve: Spent, now: datetime
) -> Refusal | None:
    """The first cap without room for `reserve` on top of what was spent, or None."""
    for cap in caps:
        if cap.scope not in spent:
            continue
        before, needed = spent[cap.scope].of(cap.unit), reserve.of(cap.unit)
        if before + needed > cap.limit:
            return Refusal(cap, before, needed, window(cap.scope, now)[1])
    return None


def crossed(caps: tuple[Cap, ...], spent: Mapping[Scope, Spent], now: datetime) -> Refusal | None:
    """The first cap that what was actually spent has reached, or None (a running job)."""
    for cap in caps:
        if cap.scope in spent and spent[cap.scope].of(cap.unit) >= cap.limit:
            return Refusal(cap, spent[cap.scope].of(cap.unit), 0.0, window(cap.scope, now)[1])
    return None


def label(cap: Cap) -> str:
    """The cap in words: "repository's daily budget"."""
    owner = {"repository": "repository's", "requester": "requester's", "service": "service's"}
    period = "monthly" if cap.period == "month" else "daily"
    kind = "budget" if cap.unit == "usd" else "token budget"
    return f"{owner[cap.scope]} {period} {kind}"


def money(unit: Unit, value: float) -> str:
    """An amount of the unit: "$1.50" or "12,000 tokens"."""
    return f"${value:.2f}" if unit == "usd" else f"{int(value):,} tokens"
