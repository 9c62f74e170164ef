"""The shared caps: which apply, how a repository lowers its own, and each refusal's words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from resolver.core.budgets import (
    Cap,
    InvalidBudgetError,
    Spent,
    caps_from,
    crossed,
    refuse_start,
    window,
)
from resolver.core.settings import Settings

NOW = datetime(2026, 11, 26, 15, 30, tzinfo=UTC)
KEY = "A" * 43 + "="


def settings(**caps: float) -> Settings:
    return Settings(_env_file=None, secret_keys=KEY, **caps)  # type: ignore[arg-type]


def test_unset_means_no_cap() -> None:
    assert caps_from(settings()) == ()


def test_a_repository_may_lower_its_own_daily_cap_and_a_higher_value_is_ignored() -> None:
    operator = settings(budget_repo_daily_usd=10.0, budget_service_monthly_usd=500.0)
    lowered = caps_from(operator, {"budget": {"daily_usd": 2.5}})
    assert Cap("repository", "usd", 2.5) in lowered
    assert Cap("service", "usd", 500.0) in lowered
    higher = caps_from(operator, {"budget": {"daily_usd": 99}})
    assert Cap("repository", "usd", 10.0) in higher
    own = caps_from(settings(), {"budget": {"daily_usd": 1, "daily_tokens": 5000}})
    assert set(own) == {Cap("repository", "usd", 1.0), Cap("repository", "tokens", 5000.0)}


@pytest.mark.parametrize(
    ("budget", "words"),
    [
        ("lots", "must be a mapping"),
        ({"daily_usd": -1}, "budget.daily_usd in .resolver/config.yml must be a positive"),
        ({"daily_usd": True}, "must be a positive number"),
        ({"monthly_usd": 5}, "budget.monthly_usd in .resolver/config.yml is unknown"),
    ],
)
def test_a_bad_repository_budget_is_a_clear_error(budget: object, words: str) -> None:
    with pytest.raises(InvalidBudgetError, match=words.replace(".", r"\.")):
        caps_from(settings(budget_repo_daily_usd=10.0), {"budget": budget})


def test_days_and_months_reset_at_utc_midnight() -> None:
    assert window("repository", NOW) == (
        datetime(2026, 11, 26, tzinfo=UTC),
        datetime(2026, 11, 27, tzinfo=UTC),
    )
    assert window("service", NOW) == (
        datetime(2026, 11, 1, tzinfo=UTC),
        datetime(2026, 12, 1, tzinfo=UTC),
    )
    assert window("service", datetime(2026, 12, 31, 23, tzinfo=UTC))[1] == datetime(
        2027, 1, 1, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("cap", "message"),
    [
        (
            Cap("repository", "usd", 10.0),
            "The repository's daily budget of $10.00 has $8.00 spent or reserved this day, "
            "and this job may spend up to $4.00. It resets at 2026-11-27 00:00 UTC.",
        ),
        (
            Cap("requester", "usd", 10.0),
            "The requester's daily budget of $10.00 has $8.00 spent or reserved this day, "
            "and this job may spend up to $4.00. It resets at 2026-11-27 00:00 UTC.",
        ),
        (
            Cap("service", "usd", 10.0),
            "The service's monthly budget of $10.00 has $8.00 spent or reserved this month, "
            "and this job may spend up to $4.00. It resets at 2026-12-01 00:00 UTC.",
        ),
        (
            Cap("repository", "tokens", 100_000),
            "The repository's daily token budget of 100,000 tokens has 80,000 tokens spent or "
            "reserved this day, and this job may spend up to 50,000 tokens. "
            "It resets at 2026-11-27 00:00 UTC.",
        ),
        (
            Cap("requester", "tokens", 100_000),
            "The requester's daily token budget of 100,000 tokens has 80,000 tokens",
        ),
        (
            Cap("service", "tokens", 100_000),
            "The service's monthly token budget of 100,000 tokens has 80,000 tokens",
        ),
    ],
)
def test_a_job_over_each_cap_is_refused_with_the_right_message(cap: Cap, message: str) -> None:
    spent = {cap.scope: Spent(usd=8.0, tokens=80_000)}
    refusal = refuse_start((cap,), spent, Spent(usd=4.0, tokens=50_000), NOW)
    assert refusal is not None and refusal.cap == cap
    assert refusal.message().startswith(message)


def test_a_job_that_fits_every_cap_starts() -> None:
    caps = (Cap("repository", "usd", 10.0), Cap("service", "tokens", 10**6))
    spent = {"repository": Spent(6.0, 10), "service": Spent(6.0, 10)}
    assert refuse_start(caps, spent, Spent(4.0, 1000), NOW) is None  # type: ignore[arg-type]
    assert refuse_start(caps, spent, Spent(4.01, 1000), NOW) is not None  # type: ignore[arg-type]


def test_a_running_job_is_stopped_once_the_spend_reaches_a_cap() -> None:
    cap = Cap("requester", "usd", 5.0)
    assert crossed((cap,), {"requester": Spent(4.99, 0)}, NOW) is None
    refusal = crossed((cap,), {"requester": Spent(5.0, 0)}, NOW)
    assert refusal is not None
    assert refusal.message(running=True) == (
        "Stopped: the requester's daily budget of $5.00 is spent ($5.00 this day). "
        "It resets at 2026-11-27 00:00 UTC."
    )
