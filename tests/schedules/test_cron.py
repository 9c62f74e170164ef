"""Due times on the wall clock of a schedule's timezone, across DST changes, and catch-up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from resolver.schedules.cron import CronError, check, latest_due, next_due, to_utc, zone

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def slots(expression: str, timezone: str, start: datetime, count: int) -> list[datetime]:
    found, at = [], start
    for _ in range(count):
        at = next_due(expression, timezone, at)
        found.append(at)
    return found


def test_monday_six_in_berlin_is_five_utc_in_winter_and_four_in_summer() -> None:
    winter, _ = slots("0 6 * * 1", BERLIN, utc(2024, 1, 1, 12), 2)
    assert winter == utc(2024, 1, 8, 5)
    assert next_due("0 6 * * 1", BERLIN, utc(2024, 6, 1)) == utc(2024, 6, 3, 4)


def test_a_slot_the_clocks_skip_runs_once_at_the_jump() -> None:
    # 2024-03-31 02:00 CET: the clocks jump to 03:00 CEST (01:00 UTC); 02:30 never happens.
    days = slots("30 2 * * *", BERLIN, utc(2024, 3, 29, 12), 4)
    assert days == [
        utc(2024, 3, 30, 1, 30),  # 02:30 CET
        utc(2024, 3, 31, 1, 0),  # the jump: 03:00 CEST
        utc(2024, 4, 1, 0, 30),  # 02:30 CEST
        utc(2024, 4, 2, 0, 30),
    ]


def test_a_slot_in_the_repeated_hour_runs_once_the_first_time_round() -> None:
    # 2024-10-27 03:00 CEST: the clocks go back to 02:00 CET; 02:30 happens twice.
    days = slots("30 2 * * *", BERLIN, utc(2024, 10, 26, 12), 2)
    assert days == [utc(2024, 10, 27, 0, 30), utc(2024, 10, 28, 1, 30)]


def test_an_hourly_schedule_keeps_one_run_per_wall_clock_hour_across_both_changes() -> None:
    spring = slots("0 * * * *", NEW_YORK, utc(2024, 3, 10, 5, 30), 4)
    # 01:00 EST; 02:00 never happens: 03:00 EDT runs once for both; 04:00 EDT; 05:00 EDT.
    assert spring == [
        utc(2024, 3, 10, 6),
        utc(2024, 3, 10, 7),
        utc(2024, 3, 10, 8),
        utc(2024, 3, 10, 9),
    ]
    autumn = slots("0 * * * *", NEW_YORK, utc(2024, 11, 3, 4, 30), 4)
    # 01:00 EDT; 01:00 EST repeats that wall-clock hour and is skipped; 02:00, 03:00, 04:00 EST.
    assert autumn == [
        utc(2024, 11, 3, 5),
        utc(2024, 11, 3, 7),
        utc(2024, 11, 3, 8),
        utc(2024, 11, 3, 9),
    ]


def test_every_slot_is_strictly_after_the_last_and_days_never_double() -> None:
    for timezone in (BERLIN, NEW_YORK, "Australia/Lord_Howe", "UTC"):
        days = slots("15 2 * * *", timezone, utc(2024, 1, 1), 366)
        assert all(a < b for a, b in pairwise(days))
        local_days = [d.astimezone(zone(timezone)).date() for d in days]
        assert len(set(local_days)) == 366, timezone


def test_catch_up_after_downtime_is_the_newest_missed_slot_only() -> None:
    since = utc(2024, 3, 4, 5)  # Monday 06:00 Berlin: the last run before the outage
    back = utc(2024, 4, 2, 9)  # four Mondays later, a Tuesday
    assert latest_due("0 6 * * 1", BERLIN, since, back) == utc(2024, 4, 1, 4)
    # Once handled, the same slot is not due again until the next Monday.
    assert latest_due("0 6 * * 1", BERLIN, utc(2024, 4, 1, 4), back) is None
    assert latest_due("0 6 * * 1", BERLIN, since, utc(2024, 3, 11, 4, 59)) is None
    assert latest_due("0 6 * * 1", BERLIN, since, utc(2024, 3, 11, 5)) == utc(2024, 3, 11, 5)


def test_catch_up_finds_a_slot_moved_by_the_jump() -> None:
    since = utc(2024, 3, 30, 1, 30)
    now = utc(2024, 3, 31, 1, 0, 30)  # 03:00:30 CEST, just after the jump
    assert latest_due("30 2 * * *", BERLIN, since, now) == utc(2024, 3, 31, 1, 0)


def test_a_wall_time_in_the_gap_moves_to_the_first_minute_after_it() -> None:
    assert to_utc(datetime(2024, 3, 31, 2, 30), zone(BERLIN)) == utc(2024, 3, 31, 1, 0)
    assert to_utc(datetime(2024, 10, 27, 2, 30), zone(BERLIN)) == utc(2024, 10, 27, 0, 30)


@pytest.mark.parametrize(
    ("expression", "timezone", "message"),
    [
        ("0 6 * *", "UTC", "five fields"),
        ("0 0 6 * * 1", "UTC", "five fields"),
        ("61 * * * *", "UTC", "not a valid"),
        ("0 0 30 2 *", "UTC", "never fires"),
        ("0 6 * * 1", "Mars/Olympus", "IANA"),
    ],
)
def test_bad_expressions_and_zones_are_refused_with_a_reason(
    expression: str, timezone: str, message: str
) -> None:
    with pytest.raises(CronError, match=message):
        check(expression, timezone)


def test_macros_and_names_are_accepted() -> None:
    check("@daily", "UTC")
    check("0 6 * * mon-fri", BERLIN)
    assert next_due("@daily", "UTC", utc(2024, 1, 1, 0, 0)) == utc(2024, 1, 2)
    assert next_due("*/15 * * * *", "UTC", utc(2024, 1, 1, 0, 7)) - utc(2024, 1, 1) == timedelta(
        minutes=15
    )
