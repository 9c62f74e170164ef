"""A forge client's JSON REST call, written once: one request through httpx, every failure
classified and worded by contract's `HttpErrors` (nothing here retries or sleeps: the callback
tasks retry, one attempt row per try), and the answer read as JSON. Each client builds its own
URL and headers, and names the call (`action`) as its vendor's reference does.

`BoundedTransport` holds any httpx call to its `Limits` (a deadline for the whole call, a cap on
its answer after decoding); the clients on httpx and githubkit send through it. Its connections
wait in each connect, write and read no longer than the call has left (`_HeldBackend`), the
status line and headers included."""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, TypeVar

import httpcore
import httpx

from integrations.toolkit.answers import read
from integrations.toolkit.limits import (
    ACCEPTED_ENCODING,
    API_CALL,
    Budget,
    CapReachedError,
    DeadlineReachedError,
    Inflater,
    Limits,
    UnaskedEncodingError,
    read_seconds,
    spending,
)
from resolver.contract.errors import HttpErrors, parse_retry_after
from resolver.core.logs import redact

MESSAGE_LIMIT: Final = 300
T = TypeVar("T")


@cache
def tls_context() -> ssl.SSLContext:
    # httpx would load the CA bundle for every client; one context serves them all.
    return httpx.create_ssl_context()


def bounded_client(
    limits: Limits = API_CALL, transport: httpx.BaseTransport | None = None, **options: Any
) -> httpx.Client:
    """An httpx client whose every request is held to `limits` (its timeouts too), sent by
    `transport` (a test's), else directly or through the environment's proxy."""
    bounded = BoundedTransport(transport, limits)
    return httpx.Client(transport=bounded, timeout=limits.seconds, **options)


class AnswerTooLargeError(httpx.DecodingError):
    """An answer larger than its cap: a DecodingError, as every client already takes an answer
    it cannot read for an unusable one."""


class BoundedTransport(httpx.BaseTransport):
    """A transport that holds each request to `limits`: every timeout shortened to the time
    left, and the answer decoded here, step by step, within its deadline and its cap (httpx
    would inflate a whole network read at once). A deadline passed is a `ReadTimeout`."""

    def __init__(self, inner: httpx.BaseTransport | None = None, limits: Limits = API_CALL) -> None:
        self._inner = inner or _FromEnvironment()
        self._limits = limits

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        budget = Budget(self._limits)
        left = budget.seconds_left()
        asked: Mapping[str, float | None] = request.extensions.get("timeout") or {}
        request.extensions["timeout"] = {
            key: min(asked.get(key) or left, left) for key in ("connect", "read", "write", "pool")
        }
        request.headers["Accept-Encoding"] = ACCEPTED_ENCODING
        with spending(budget):
            response = self._inner.handle_request(request)
        try:
            inflater = Inflater.of(response.headers.get("content-encoding"))
        except UnaskedEncodingError as error:
            response.close()
            raise httpx.DecodingError(str(error), request=request) from None
        if not isinstance(response.stream, httpx.SyncByteStream):
            raise TypeError("a synchronous transport answered with an asynchronous stream")
        stream = _BoundedStream(response.stream, request, budget, inflater)
        # The body is decoded here: what reaches httpx is neither compressed nor that long.
        decoded = ("content-encoding", "content-length")
        headers = [(k, v) for k, v in response.headers.multi_items() if k not in decoded]
        return httpx.Response(
            response.status_code, headers=headers, stream=stream, extensions=response.extensions
        )

    def close(self) -> None:
        self._inner.close()


class _FromEnvironment(httpx.BaseTransport):
    """Direct, or through the proxy the environment names for the URL (`HTTPS_PROXY`,
    `NO_PROXY`): what httpx does unless it is given a transport, as `BoundedTransport` is."""

    def __init__(self) -> None:
        self._by_proxy: dict[str | None, httpx.HTTPTransport] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        proxies = urllib.request.getproxies()
        bypass = urllib.request.proxy_bypass(request.url.host)
        proxy = None if bypass else proxies.get(request.url.scheme) or proxies.get("all")
        if proxy not in self._by_proxy:
            self._by_proxy[proxy] = _held(httpx.HTTPTransport(verify=tls_context(), proxy=proxy))
        return self._by_proxy[proxy].handle_request(request)

    def close(self) -> None:
        for transport in self._by_proxy.values():
            transport.close()


def _held(transport: httpx.HTTPTransport) -> httpx.HTTPTransport:
    """`transport`, its connections opened through a `_HeldBackend`. httpx takes no network
    backend of its own, but its pool (httpcore's) keeps the one it was given there."""
    pool = transport._pool
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(backend, httpcore.NetworkBackend):
        raise TypeError("httpx's pool keeps no network backend where it used to")
    pool._network_backend = _HeldBackend(backend)
    return transport


class _HeldBackend(httpcore.NetworkBackend):
    """httpcore's backend, each connect held to the time the call in progress has left; a
    read's timeout bounds one read, so a status line sent a byte at a time was bounded only
    by the number of bytes."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        seconds = _held_seconds(timeout, httpcore.ConnectTimeout)
        inner = self._inner.connect_tcp(host, port, seconds, local_address, socket_options)
        return _HeldStream(inner)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        seconds = _held_seconds(timeout, httpcore.ConnectTimeout)
        return _HeldStream(self._inner.connect_unix_socket(path, seconds, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _HeldStream(httpcore.NetworkStream):
    """A connection whose every read and write waits no longer than its call has left."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _held_seconds(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _held_seconds(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        seconds = _held_seconds(timeout, httpcore.ConnectTimeout)
        return _HeldStream(self._inner.start_tls(ssl_context, server_hostname, seconds))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _held_seconds(asked: float | None, timeout: type[httpcore.TimeoutException]) -> float | None:
    try:
        return read_seconds(asked)
    except DeadlineReachedError as error:
        raise timeout(str(error)) from None


@dataclass(frozen=True)
class _BoundedStream(httpx.SyncByteStream):
    raw: httpx.SyncByteStream
    request: httpx.Request
    budget: Budget
    inflater: Inflater | None

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self.budget.chunks(self._arriving(), self.inflater)
        except DeadlineReachedError as error:
            raise httpx.ReadTimeout(str(error), request=self.request) from None
        except CapReachedError as error:
            raise AnswerTooLargeError(str(error), request=self.request) from None
        except UnaskedEncodingError as error:
            raise httpx.DecodingError(str(error), request=self.request) from None

    def _arriving(self) -> Iterator[bytes]:
        """The raw chunks, each network read held to the call's deadline."""
        chunks = iter(self.raw)
        while True:
            with spending(self.budget):
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk

    def close(self) -> None:
        self.raw.close()


@dataclass(frozen=True)
class JsonCalls:
    """How one vendor's API answers: who it is in errors, where its error document keeps its
    words (`("error", "message")`), the statuses below 400 that are its sign-in page, and the
    deadline and cap each call is held to."""

    errors: HttpErrors
    detail: tuple[str, ...] = ("message",)
    sign_in_page: frozenset[int] = frozenset()
    limits: Limits = API_CALL

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
            with bounded_client(self.limits, transport) as http:
                response = http.request(method, url, headers=headers, json=json, params=params)
        except httpx.TimeoutException:
            raise self.errors.timed_out(action) from None
        except httpx.TransportError as error:
            raise self.errors.unreachable(action, error) from None
        except httpx.InvalidURL as error:
            raise self.errors.unusable_url(action, error) from None
        except httpx.DecodingError as error:  # past its cap, or its encoding does not describe it
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
