"""Authlib's requests (a sign-in's or a proof's code exchange, the provider's metadata, the keys
an ID token is checked against, its userinfo) with a cap on each answer: httpx2 reads an answer
whole however large, and a token endpoint sending an endless body grew the web process's memory
until the exchange's deadline. Past the cap the answer is an `httpx2.DecodingError`, which the
sign-in takes for a sign-in to try again (`proofs.REFUSED`).

Authlib makes a client of its `client_cls` for each request, and so a transport of its own
(`CappedOAuth2Client`): one shared would be closed by the first client done with it.
"""

from __future__ import annotations

import urllib.request
import zlib
from collections.abc import AsyncIterator
from typing import Any, Final

import httpx2
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.integrations.starlette_client import OAuth, StarletteOAuth2App

ANSWER_MAX_BYTES: Final = 1024 * 1024
"""The most of an answer read. A token answer, a provider's keys or its userinfo is a few
kilobytes: a megabyte leaves room and keeps a huge or endless body out of memory."""


class AnswerTooLargeError(httpx2.DecodingError):
    """An answer longer than its cap: an answer unusable, as httpx2 calls one it cannot read."""


INFLATED: Final = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 0}
"""The encodings a server may send though asked for none, inflated here (zlib's `wbits`: gzip's
header, or zlib's or raw deflate's, told apart by its first bytes) so the cap holds on what they
become; any other is refused."""


class CappedTransport(httpx2.AsyncBaseTransport):
    """Each answer asked for unencoded (`identity`) and read up to `max_bytes`, counted after
    inflating a gzip or deflate one a server sent anyway; one longer, or in another encoding, is
    refused. Sent directly or through the proxy the environment names for its URL, as httpx2
    does unless it is given a transport."""

    def __init__(self, max_bytes: int = ANSWER_MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._by_proxy: dict[str | None, httpx2.AsyncHTTPTransport] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await self._transport_for(request.url).handle_async_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        length = response.headers.get("content-length", "")
        inflated = encoding not in ("", "identity")
        if inflated and encoding not in INFLATED:
            await response.aclose()
            why = f"an answer in {encoding[:40]!r}, which was not asked for"
            raise httpx2.DecodingError(why, request=request)
        if length.isdigit() and int(length) > self._max_bytes:
            await response.aclose()
            raise AnswerTooLargeError(f"an answer of {length} bytes", request=request)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        if inflated:  # read here, inflated as it comes: httpx2 gets it plain
            del response.headers["content-encoding"]
            response.headers.pop("content-length", None)
        wbits = INFLATED.get(encoding) if inflated else None
        response.stream = _CappedStream(stream, request, self._max_bytes, wbits)
        return response

    def _transport_for(self, url: httpx2.URL) -> httpx2.AsyncHTTPTransport:
        proxies = urllib.request.getproxies()
        bypass = urllib.request.proxy_bypass(url.host)
        proxy = None if bypass else proxies.get(url.scheme) or proxies.get("all")
        if proxy not in self._by_proxy:
            self._by_proxy[proxy] = httpx2.AsyncHTTPTransport(proxy=proxy)
        return self._by_proxy[proxy]

    async def aclose(self) -> None:
        for transport in self._by_proxy.values():
            await transport.aclose()


class _CappedStream(httpx2.AsyncByteStream):
    """The answer's bytes, inflated first where `wbits` says how, up to `cap` of them."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, request: httpx2.Request, cap: int, wbits: int | None
    ) -> None:
        self._inner, self._request, self._cap, self._wbits = inner, request, cap, wbits

    async def __aiter__(self) -> AsyncIterator[bytes]:
        left = self._cap
        inflater = None
        async for raw in self._inner:
            if self._wbits is not None and inflater is None:
                # deflate: zlib's stream (RFC 1950) as the RFC says, or raw deflate as some send
                zlib_header = self._wbits != 0 or (
                    len(raw) > 1 and (raw[0] * 256 + raw[1]) % 31 == 0
                )
                inflater = zlib.decompressobj(
                    self._wbits or (zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
                )
            try:
                chunk = inflater.decompress(raw, left + 1) if inflater else raw
            except zlib.error as error:
                raise httpx2.DecodingError(
                    f"an answer that does not inflate: {error}", request=self._request
                ) from None
            left -= len(chunk)
            if left < 0 or (inflater is not None and inflater.unconsumed_tail):
                why = f"an answer longer than {self._cap} bytes"
                raise AnswerTooLargeError(why, request=self._request)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedOAuth2Client(AsyncOAuth2Client):  # type: ignore[misc]
    """Authlib's client for one request, sent by a `CappedTransport` of its own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, transport=CappedTransport(), **kwargs)


class _CappedApp(StarletteOAuth2App):  # type: ignore[misc]
    client_cls = CappedOAuth2Client


class CappedOAuth(OAuth):  # type: ignore[misc]
    """Authlib's registry of OAuth 2.0 clients, each making its requests capped."""

    oauth2_client_cls = _CappedApp
