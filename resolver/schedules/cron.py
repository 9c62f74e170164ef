"""When a schedule is due: a cron expression read on the wall clock of its timezone. Pure.

A schedule runs once per wall-clock slot, whatever daylight saving does:
- a slot the clocks skip (02:30 on the night they go forward) runs at the first minute that
  exists after it (03:00), as Vixie cron does;
- a slot in the hour that repeats when the clocks go back runs once, the first time round.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter

# Clock changes are at most a few hours (a day, in two historic cases); search that far.
MAX_GAP: Final = timedelta(hours=48)
MAX_STEPS: Final = 50


class CronError(ValueError):
    """A cron expression or timezone that cannot be used; the message says why."""


def zone(name: str) -> ZoneInfo:
    """The IANA timezone `name` (`Europe/Berlin`, `UTC`)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CronError(f"{name!r} is not an IANA timezone such as Europe/Berlin or UTC") from None


def check(expression: str, timezone: str) -> None:
    """Raise CronError unless `expression` is a five-field cron line that ever fires."""
    fields = expression.split()
    if not expression.startswith("@") and len(fields) != 5:
        raise CronError(
            f"{expression!r} is not a cron expression: write five fields, "
            "minute hour day-of-month month day-of-week (`0 6 * * 1`)"
        )
    if not croniter.is_valid(expression):
        raise CronError(f"{expression!r} is not a valid cron expression")
    next_due(expression, timezone, datetime(2000, 1, 1, tzinfo=UTC))


def next_due(expression: str, timezone: str, after: datetime) -> datetime:
    """The first slot strictly after `after`, in UTC."""
    tz = zone(timezone)
    slots = _walls(expression, _wall(after, tz), forward=True)
    for _ in range(MAX_STEPS):
        instant = to_utc(next(slots), tz)
        if instant > after:
            return instant
    raise CronError(f"{expression!r} found no slot after {after.isoformat()}")


def latest_due(expression: str, timezone: str, since: datetime, now: datetime) -> datetime | None:
    """The newest slot in (since, now], or None. However many slots were missed while the
    service was down, only the newest is due: a missed run is caught up once."""
    tz = zone(timezone)
    slots = _walls(expression, _wall(now, tz) + timedelta(seconds=1), forward=False)
    for _ in range(MAX_STEPS):
        instant = to_utc(next(slots), tz)
        if instant <= now:
            return instant if instant > since else None
    return None


def to_utc(wall: datetime, tz: ZoneInfo) -> datetime:
    """The instant a wall-clock time happens: the first time round when it happens twice, the
    first existing minute after it when the clocks skip it."""
    moment = wall
    while moment - wall <= MAX_GAP:
        local = moment.replace(tzinfo=tz, fold=0)
        instant = local.astimezone(UTC)
        if instant.astimezone(tz).replace(tzinfo=None) == moment:
            return instant
        moment = (moment + timedelta(minutes=1)).replace(second=0, microsecond=0)
    raise CronError(f"{wall.isoformat()} never happens in {tz.key}")


def _wall(instant: datetime, tz: ZoneInfo) -> datetime:
    return instant.astimezone(tz).replace(tzinfo=None)


def _walls(expression: str, start: datetime, *, forward: bool) -> _Slots:
    """Wall-clock slots from `start` (naive: cron reads the local clock, never an offset)."""
    try:
        slots = croniter(expression, start, ret_type=datetime)
    except (CroniterBadCronError, ValueError) as error:
        raise CronError(f"{expression!r} is not a valid cron expression: {error}") from None
    return _Slots(slots, forward)


class _Slots:
    """A croniter walked one way; an expression that never matches raises CronError."""

    def __init__(self, slots: croniter[datetime], forward: bool) -> None:
        self._slots, self._forward = slots, forward

    def __iter__(self) -> _Slots:
        return self

    def __next__(self) -> datetime:
        try:
            return self._slots.get_next() if self._forward else self._slots.get_prev()
        except CroniterBadDateError:
            raise CronError("the cron expression never fires") from None
