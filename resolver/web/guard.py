"""Two plain ASGI middlewares of the web app: the security headers on every response but the
webhooks', and the cap on a form's size and what it may hold, checked before anything parses
it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from resolver.web.inputs import ID

FORM_BYTES: Final = 64 * 1024
SETUP_PREFIX: Final = "/setup"
HSTS_SECONDS: Final = 365 * 24 * 3600
BODILESS: Final = frozenset({"GET", "HEAD", "OPTIONS"})


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def content_policy(form_targets: Iterable[str] = ()) -> str:
    """No inline script or style, nothing from elsewhere, never framed; forms post here, or
    (on /setup) to the providers whose app flows send the browser there."""
    targets = "".join(f" {target}" for target in sorted(set(form_targets)))
    return "; ".join(
        [
            "default-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
            f"form-action 'self'{targets}",
        ]
    )


def header_list(policy: str, https: bool) -> list[tuple[bytes, bytes]]:
    found = [
        (b"content-security-policy", policy.encode()),
        (b"x-frame-options", b"DENY"),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
    ]
    if https:
        found.append((b"strict-transport-security", f"max-age={HSTS_SECONDS}".encode()))
    return found


class SecurityHeaders:
    """Adds the headers to each response's start, except under `skip` (the webhook routes,
    whose callers are servers). /setup gets the wider `form-action` its app flows need."""

    def __init__(
        self, app: ASGIApp, *, public_url: str, setup_targets: Iterable[str], skip: str
    ) -> None:
        self.app, self.skip = app, skip
        https = urlsplit(public_url).scheme == "https"
        self.headers = header_list(content_policy(), https)
        self.setup_headers = header_list(content_policy(setup_targets), https)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(self.skip):
            await self.app(scope, receive, send)
            return
        setup = path == SETUP_PREFIX or path.startswith(SETUP_PREFIX + "/")
        extra = self.setup_headers if setup else self.headers

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _TooLargeError(Exception):
    pass


class _NulError(Exception):
    pass


NUL: Final = (b"%00", b"\x00")
"""A NUL character, encoded or not. No query or form here has one, and PostgreSQL refuses it
in text (an error, not an answer): such a request is refused with 400 before it is read."""


class FormLimit:
    """A request body of more than `FORM_BYTES` is refused with 413: by its Content-Length
    before a byte is read, or as soon as the streamed body passes the cap. Multipart (file
    parts, spooled to disk by the parser) is refused outright: no form here has a file. A query
    or a form with a NUL character in it is refused with 400."""

    def __init__(self, app: ASGIApp, limit: int = FORM_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _has_nul(scope.get("query_string", b"")):
            await _nul()(scope, receive, send)
            return
        if scope["type"] != "http" or scope["method"] in BODILESS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refused = self._refused(headers)
        if refused is not None:
            await refused(scope, receive, send)
            return
        # A form's `%00` is a NUL (a `%` typed in a field arrives as `%25`); other bodies may
        # hold those three characters as text.
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        form = kind in ("", "application/x-www-form-urlencoded")
        read, started, tail = 0, False, b""

        async def capped() -> Message:
            nonlocal read, tail
            message = await receive()
            chunk: bytes = message.get("body", b"")
            read += len(chunk)
            if read > self.limit:
                raise _TooLargeError
            if form and _has_nul(tail + chunk):  # `%00` may straddle two chunks
                raise _NulError
            tail = (tail + chunk)[-2:]
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, capped, watched)
        except _TooLargeError:
            if started:
                raise
            await _too_large()(scope, receive, send)
        except _NulError:
            if started:
                raise
            await _nul()(scope, receive, send)

    def _refused(self, headers: Headers) -> PlainTextResponse | None:
        if headers.get("content-type", "").lower().startswith("multipart/"):
            return PlainTextResponse("Forms here carry no files.", status_code=415)
        length = headers.get("content-length")
        if length is None:
            return None
        if not ID.fullmatch(length):
            return PlainTextResponse("Bad Content-Length.", status_code=400)
        return _too_large() if int(length) > self.limit else None


def _too_large() -> PlainTextResponse:
    return PlainTextResponse("This form is too large.", status_code=413)


def _has_nul(raw: bytes) -> bool:
    return any(mark in raw for mark in NUL)


def _nul() -> PlainTextResponse:
    return PlainTextResponse("A NUL character is not accepted here.", status_code=400)
