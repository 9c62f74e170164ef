"""A forge client's JSON REST call, written once: one request through httpx, every failure
classified and worded by contract's `HttpErrors` (nothing here retries or sleeps: the callback
tasks retry, one attempt row per try), and the answer read as JSON. Each client builds its own
URL and headers, and names the call (`action`) as its vendor's reference does."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, TypeVar

import httpx

from integrations.toolkit.answers import read
from resolver.contract.errors import HttpErrors, parse_retry_after
from resolver.core.logs import redact

TIMEOUT_SECONDS: Final = 30.0
MESSAGE_LIMIT: Final = 300
T = TypeVar("T")


@cache
def tls_context() -> ssl.SSLContext:
    # httpx would load the CA bundle for every client; one context serves them all.
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class JsonCalls:
    """How one vendor's API answers: who it is in errors, where its error document keeps its
    words (`("error", "message")`), and the statuses below 400 that are its sign-in page."""

    errors: HttpErrors
    detail: tuple[str, ...] = ("message",)
    sign_in_page: frozenset[int] = frozenset()

    def send(
        self,
        method: str,
        action: str,
        url: str,
        *,
        headers: Mapping[str, str],
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> httpx.Response:
        """One request; an error answer, a timeout or no answer leaves as a CallbackError."""
        try:
            with httpx.Client(
                timeout=TIMEOUT_SECONDS, transport=transport, verify=tls_context()
            ) as http:
                response = http.request(method, url, headers=headers, json=json, params=params)
        except httpx.TimeoutException:
            raise self.errors.timed_out(action) from None
        except httpx.TransportError as error:
            raise self.errors.unreachable(action, error) from None
        except httpx.InvalidURL as error:
            raise self.errors.unusable_url(action, error) from None
        except httpx.DecodingError as error:  # a body its Content-Encoding does not describe
            raise self.errors.unusable_answer(action, error) from None
        status = response.status_code
        # A redirect is no answer to an API call (a login page, another host): never success.
        if status >= 300 or status in self.sign_in_page:
            status = 401 if status in self.sign_in_page else status
            wait = parse_retry_after(response.headers.get("retry-after"))
            detail = self.error_detail(response)
            raise self.errors.answered(action, status, detail, retry_after=wait)
        return response

    def read(self, action: str, response: httpx.Response, shape: Callable[[Any], T]) -> T:
        """The answer's JSON as `shape` reads it (`fields`, or a client's own reader); an answer
        that is not JSON, or JSON `shape` cannot read, is a permanent error."""
        return read(self.errors, action, response.json, shape)

    def error_detail(self, response: httpx.Response) -> str:
        """The vendor's own words in an error answer, redacted and shortened."""
        try:
            found: Any = response.json()
        except ValueError:
            found = None
        for key in self.detail:
            found = found.get(key) if isinstance(found, dict) else None
        text = str(found or response.reason_phrase or "no message")
        return redact(text)[:MESSAGE_LIMIT]
