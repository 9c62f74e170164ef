"""How the host reaches an MCP server, as transports of the `mcp` SDK, each with a byte cap:
a stdio server in the sandbox through its attached exec (sandbox.Attached), and a remote one
over streamable HTTP with the repository's credential in a header only the host sends.

The credential is added by the transport to each request whose own URL, as httpx2 sends it, is
on the origin the credential is bound to: a redirect the SDK follows, or a URL two parsers
read apart, never carries it to another scheme, host or port.

A server that sends a message over the cap is cut off: its stream ends, the waiting call
fails, and `Guard.too_large` says why.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.to_thread
import httpx2
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from resolver.contract.mcp import Origin, origin_of
from sandbox import Attached


@dataclass
class Guard:
    """What one server's transport saw that its caller must explain."""

    max_bytes: int
    too_large: bool = False
    end: Callable[[], None] | None = None
    """Ends the server's process at once (a stdio one), when the host gives up on it."""


@dataclass(frozen=True)
class BoundHeader:
    """A credential's header, added only to requests to `origin` (which is private)."""

    origin: Origin
    name: str
    value: str = field(repr=False)


def url_origin(url: str | httpx2.URL) -> Origin | None:
    """The origin httpx2 sends a request for `url` to; None when it does not read as a URL."""
    try:
        parsed = url if isinstance(url, httpx2.URL) else httpx2.URL(url)
    except httpx2.InvalidURL:
        return None
    return origin_of(parsed.scheme, parsed.raw_host.decode("ascii", "replace"), parsed.port)


@asynccontextmanager
async def sandbox_stdio(attached: Attached, guard: Guard) -> AsyncIterator[TransportStreams]:
    """Newline-delimited JSON-RPC over the attached process's stdin and stdout."""
    guard.end = attached.close
    incoming, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        async with incoming:
            buffer = b""
            while chunk := await anyio.to_thread.run_sync(attached.read, abandon_on_cancel=True):
                *lines, buffer = (buffer + chunk).split(b"\n")
                if len(buffer) > guard.max_bytes or any(len(x) > guard.max_bytes for x in lines):
                    guard.too_large = True
                    await anyio.to_thread.run_sync(attached.close)  # an exec: not on the loop
                    return
                for line in lines:
                    if line.strip():
                        await incoming.send(_parse_line(line))

    async def writer() -> None:
        async with outgoing:
            async for message in outgoing:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await anyio.to_thread.run_sync(attached.write, data.encode())
                except OSError:
                    return

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            attached.close()
            tasks.cancel_scope.cancel()


def _parse_line(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        return error


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, guard: Guard) -> None:
        self._inner, self._guard = inner, guard

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._guard.max_bytes:
                self._guard.too_large = True
                raise httpx2.ReadError("the MCP server's answer is over the size cap")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedTransport(httpx2.AsyncBaseTransport):
    """Every response's body counted as it arrives, and cut off past the cap; the credential
    added to the requests to its origin alone."""

    def __init__(self, guard: Guard, header: BoundHeader | None) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._guard, self._header = guard, header

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(self._with_credential(request))
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        response.stream = _CappedStream(stream, self._guard)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _with_credential(self, request: httpx2.Request) -> httpx2.Request:
        """A copy of `request` with the credential when it goes to the credential's origin.
        The client's own request never holds it: httpx2 builds a redirect's request from that
        one, and keeps every header but Authorization on a move to another origin."""
        header = self._header
        if header is None or not header.origin.private or url_origin(request.url) != header.origin:
            return request
        headers = request.headers.copy()
        headers[header.name] = header.value
        return httpx2.Request(
            request.method,
            request.url,
            headers=headers,
            stream=request.stream,
            extensions=request.extensions,
        )


@asynccontextmanager
async def remote_http(
    url: str, header: BoundHeader | None, guard: Guard, timeout: float
) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP to `url`, from the host, with `header` on the requests to its origin."""
    client = httpx2.AsyncClient(
        timeout=httpx2.Timeout(timeout),
        transport=_CappedTransport(guard, header),
        follow_redirects=False,  # the SDK follows a redirect itself, within the origin alone
    )
    async with (
        client,
        streamable_http_client(
            url, http_client=client, max_sse_event_size=guard.max_bytes
        ) as streams,
    ):
        yield streams
