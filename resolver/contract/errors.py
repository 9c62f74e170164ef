"""The two fates of a failed call to a provider's API: retry later, or give up and say why.

Every provider client reads its library's errors into plain values at its edge and hands them
to its `HttpErrors`, which decides the fate and the wording once for all of them; the callback
tasks decide retries from the class alone. Pure: no I/O, no HTTP client imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final


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


MAX_RETRY_AFTER: Final = 86_400.0
"""The longest wait a `Retry-After` is read as: a day (the caller's backoff is shorter still)."""


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header: delta-seconds or an HTTP date (RFC 9110)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # `str.isdigit` also takes "²"
        return min(float(text[:12]), MAX_RETRY_AFTER)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True)
class HttpErrors:
    """One provider's failed HTTP calls, classified and worded: its client catches its library's
    exceptions and passes what they carry (a status, the provider's words, a wait) here."""

    vendor: str  # as messages name it: "GitHub"
    # How an error answer reads. Slack leads with its error code: its errors mostly come as 200s.
    says: str = "{vendor} answered {status} to {action}: {detail}"
    # Added to a refused token's message where the client has nothing better to say instead.
    refused: str = ""
    url: str = "API URL"  # what the configured address is called when it cannot be used
    # Whether an error inside a 2xx answer records that status (Slack's attempts show the 200).
    records_ok_status: bool = False

    def answered(
        self,
        action: str,
        status: int | None,
        detail: str,
        *,
        retry_after: float | None = None,
        transient: bool = False,
        refused: bool = False,
    ) -> CallbackError:
        """An error answer to `action`: transient on 5xx, 429, no status at all or when the
        provider's own error code says so (`transient`), else permanent."""
        message = self.says.format(vendor=self.vendor, status=status, action=action, detail=detail)
        ok = status is not None and status < 400
        recorded = None if ok and not self.records_ok_status else status
        if status is None or transient or is_transient_status(status):
            return TransientCallbackError(message, retry_after=retry_after, status=recorded)
        if refused or status == 401:
            message += self.refused
        return PermanentCallbackError(message, status=recorded)

    def rate_limited(self, action: str, status: int, wait: float) -> TransientCallbackError:
        """A rate limit the client library recognised, with the wait it read."""
        message = f"{self.vendor} rate-limited {action} ({status}); retry in {wait:.0f}s"
        return TransientCallbackError(message, retry_after=wait, status=status)

    def unreachable(self, action: str, error: BaseException) -> TransientCallbackError:
        """No answer: the connection failed or broke off (named by the exception's class only,
        as its text can carry the URL and its credentials)."""
        return TransientCallbackError(
            f"{self.vendor} could not be reached for {action}: {type(error).__name__}"
        )

    def timed_out(self, action: str) -> TransientCallbackError:
        return TransientCallbackError(f"{self.vendor} did not answer {action} in time")

    def unusable_url(self, action: str, error: BaseException) -> PermanentCallbackError:
        """The configured address is not a URL the client can call: a setting to fix."""
        message = f"the {self.vendor} {self.url} cannot be used for {action}"
        return PermanentCallbackError(f"{message}: {type(error).__name__}")

    def unusable_answer(self, action: str, error: BaseException) -> PermanentCallbackError:
        """An answer the client library could not read (not JSON, a redirect of a POST)."""
        message = f"{self.vendor}'s answer to {action} was unusable: {type(error).__name__}"
        return PermanentCallbackError(message)


class RouteError(Exception):
    """A repository or default route that cannot be used; the message says what to write."""
