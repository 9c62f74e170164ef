"""The two fates of a failed call to a provider's API: retry later, or give up and say why.

Every provider client maps its library's errors into these once, at its edge, so the callback
tasks decide retries from the class alone. Pure: no I/O, no HTTP client imports.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


class CallbackError(Exception):
    """A provider call failed. Messages never contain credentials."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientCallbackError(CallbackError):
    """Worth retrying: 5xx, a network error, a rate limit. `retry_after` is in seconds, if known."""

    def __init__(
        self, message: str, *, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class PermanentCallbackError(CallbackError):
    """Retrying cannot help (4xx: no permission, not found, invalid): tell the user instead."""


def is_transient_status(status: int) -> bool:
    """5xx and 429 pass with time; every other error status needs a change first."""
    return status >= 500 or status == 429


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header: delta-seconds or an HTTP date (RFC 9110)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class RouteError(Exception):
    """A repository or default route that cannot be used; the message says what to write."""
