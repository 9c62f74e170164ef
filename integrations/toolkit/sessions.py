"""The toolkit's `Limits` for the clients built on requests: a transport adapter that reads each
answer through a budget, a network read at a time and after urllib3 has decoded it (urllib3
inflates no more than it is asked for), and fails past its deadline or its cap. requests' own
timeout bounds each read, and it reads an answer whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from integrations.toolkit.limits import (
    API_CALL,
    Budget,
    CapReachedError,
    DeadlineReachedError,
    Limits,
)

Timeout = float | tuple[float | None, float | None] | None


class AnswerTooLargeError(requests.exceptions.ContentDecodingError):
    """An answer larger than its cap: one that cannot be read, as a body that does not decode."""


class BoundedAdapter(HTTPAdapter):
    """An adapter that holds each request to `limits`: its timeouts shortened to the time left,
    its answer read within the deadline and up to the cap (a deadline passed is a
    `ReadTimeout`)."""

    def __init__(self, limits: Limits = API_CALL) -> None:
        super().__init__()
        self.limits = limits

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Timeout = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: dict[str, str] | None = None,
    ) -> requests.Response:
        budget = Budget(self.limits)
        timeout = _within(timeout, budget.seconds_left())
        response = super().send(request, stream, timeout, verify, cert, proxies)
        response.raw = _BoundedBody(response.raw, budget)
        return response


def mount_bounded(session: requests.Session, limits: Limits = API_CALL) -> None:
    """Send every request of `session` through a `BoundedAdapter`."""
    for prefix in ("https://", "http://"):
        session.mount(prefix, BoundedAdapter(limits))


def _within(timeout: object, left: float) -> Timeout:
    if isinstance(timeout, tuple):
        connect, read = timeout
        return min(connect or left, left), min(read or left, left)
    return min(timeout, left) if isinstance(timeout, int | float) else left


class _BoundedBody:
    """urllib3's answer, whose decoded stream (what requests reads) spends the budget."""

    def __init__(self, raw: Any, budget: Budget) -> None:
        self._raw = raw
        self._budget = budget

    def stream(self, amt: int = 65536, decode_content: bool | None = None) -> Iterator[bytes]:
        """The body, a network read at a time (urllib3's `stream` blocks until `amt` bytes
        have come, however slowly), each read spent before it is yielded."""
        try:
            while chunk := self._raw.read1(amt, decode_content=decode_content):
                self._budget.spend(len(chunk))
                yield chunk
        except DeadlineReachedError as error:
            raise requests.exceptions.ReadTimeout(str(error)) from None
        except CapReachedError as error:
            raise AnswerTooLargeError(str(error)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)
