"""The repository's MCP servers as the agent's tools, for one job: connected once, listed,
narrowed by the repository's allow and deny lists, and called when the model asks.

The `mcp` SDK is asynchronous and the loop is not, so the clients live on an event loop in a
thread of their own (anyio's blocking portal). Every answer is capped and fenced as untrusted
text, as command output is; a server that does not answer in time, or sends too much, is cut
off with a message the model reads, and its tools answer with that message from then on.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeoutError
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    ExitStack,
    asynccontextmanager,
)
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import httpx2
import mcp_types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from resolver.agent.mcp_config import TOOL_NAME, McpServer, shown_name
from resolver.agent.mcp_transport import (
    BoundHeader,
    Guard,
    remote_http,
    sandbox_stdio,
    url_origin,
)
from resolver.agent.prompt import fence
from resolver.agent.tools import Observation
from resolver.contract.mcp import credential_withheld
from resolver.core.logs import log
from resolver.core.redact import Redactor
from sandbox import Sandbox, SandboxError

logger = logging.getLogger(__name__)

MAX_TOOLS_PER_SERVER: Final = 32
DESCRIPTION_CHARS: Final = 1000
# Past the server's own timeout, the host waits this long for the SDK to give up by itself.
GRACE_SECONDS: Final = 5.0
# What a server can do wrong while starting or answering: each is the server's fault, never ours.
SERVER_FAULTS: Final = (
    MCPError,
    OSError,
    TimeoutError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
    httpx2.HTTPError,
    ValidationError,
    SandboxError,
    ExceptionGroup,
)


@dataclass(frozen=True)
class McpLimits:
    timeout: float
    max_bytes: int
    output_chars: int


@dataclass(frozen=True)
class Credential:
    """A remote server's credential: one header the host adds to its requests to `origin`,
    the origin the operator stored it for (None: stored before origins, so never sent)."""

    header: str
    value: str = field(repr=False)
    origin: str | None = None


@dataclass
class _Server:
    config: McpServer
    guard: Guard
    opened: AbstractContextManager[Client] | None = None
    client: Client | None = None
    cut_off: str | None = None
    tools: dict[str, str] = field(default_factory=dict)
    """The model's name of each tool shown → the server's name of it."""


class McpTools:
    """The job's MCP servers. Use as a context manager: leaving it ends every server."""

    def __init__(
        self,
        servers: Sequence[McpServer],
        sandbox: Sandbox,
        credentials: Mapping[str, Credential],
        limits: McpLimits,
    ) -> None:
        self._servers = [_Server(s, Guard(limits.max_bytes)) for s in servers]
        self._sandbox, self._credentials = sandbox, credentials
        # What a server says is masked before it is cut: a credential across the cut would
        # keep a part no mask matches.
        self._mask = Redactor(c.value for c in credentials.values())
        self._limits = limits
        self._stack = ExitStack()
        self._portal: BlockingPortal | None = None
        self.schemas: tuple[dict[str, Any], ...] = ()
        self.record: list[dict[str, Any]] = []
        """Each server: its name, kind, the tools shown, or why it has none."""

    def __enter__(self) -> McpTools:
        try:
            if self._servers:
                self._portal = self._stack.enter_context(start_blocking_portal())
            for server in self._servers:
                self._connect(server)
        except BaseException:
            self.__exit__()  # the servers already started end with the job's sandbox anyway
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        """End every server; what a server does wrong while it ends is logged, never raised."""
        for server in reversed(self._servers):
            if server.opened is None:
                continue
            try:
                server.opened.__exit__(None, None, None)
            except SERVER_FAULTS as error:
                name = server.config.name
                log(
                    logger,
                    logging.INFO,
                    "agent.mcp_end_failed",
                    server=name,
                    error=_describe(error, self._mask),
                )
        self._stack.close()

    def owns(self, tool: str) -> bool:
        return any(tool in server.tools for server in self._servers)

    def run(self, tool: str, raw_arguments: str, seconds_left: float, nonce: str) -> Observation:
        """Call one tool; whatever the server does, the model gets an observation, its answer
        fenced with the job's `nonce` as untrusted text."""
        server = next(s for s in self._servers if tool in s.tools)
        details: dict[str, Any] = {"mcp_server": server.config.name, "remote": server.config.remote}
        try:
            arguments = json.loads(raw_arguments or "{}")
        except ValueError as invalid:
            return Observation(f"The arguments of {tool} are not valid JSON ({invalid}).", True)
        if not isinstance(arguments, dict):
            return Observation(f"The arguments of {tool} must be a JSON object.", True)
        if server.cut_off:
            return Observation(server.cut_off, error=True, details=details)
        started = time.monotonic()
        timeout = max(1.0, min(self._limits.timeout, seconds_left))
        content, error = self._call(server, server.tools[tool], arguments, timeout, nonce)
        details["duration"] = round(time.monotonic() - started, 3)
        return Observation(content, error, details=details)

    # --- connecting

    def _connect(self, server: _Server) -> None:
        assert self._portal is not None
        name = server.config.name
        entry: dict[str, Any] = {"server": name, "remote": server.config.remote}
        self.record.append(entry)
        client = Client(self._transport(server, entry), read_timeout_seconds=self._limits.timeout)
        try:
            opened = self._portal.wrap_async_context_manager(client)
            server.client = opened.__enter__()
            server.opened = opened
            listed = self._wait(self._portal.start_task_soon(_list_tools, server.client), server)
        except SERVER_FAULTS as error:
            entry["error"] = self._fault(server, error, "start")
            return
        shown = [t for t in listed if TOOL_NAME.fullmatch(t.name) and server.config.shows(t.name)]
        for found in shown[:MAX_TOOLS_PER_SERVER]:
            server.tools[shown_name(name, found.name)] = found.name
        self.schemas += tuple(
            _schema(shown_name(name, t.name), t) for t in shown[:MAX_TOOLS_PER_SERVER]
        )
        entry["tools"] = list(server.tools)
        log(logger, logging.INFO, "agent.mcp_connected", server=name, tools=len(server.tools))

    def _transport(
        self, server: _Server, entry: dict[str, Any]
    ) -> AbstractAsyncContextManager[Any]:
        config = server.config
        if config.url is None:
            return _in_sandbox(self._sandbox, list(config.command), server.guard)
        header = self._header(config.name, config.url, entry)
        return remote_http(config.url, header, server.guard, self._limits.timeout)

    def _header(self, name: str, url: str, entry: dict[str, Any]) -> BoundHeader | None:
        """The server's credential, when it is bound to the origin of the URL the repository
        names; else the server goes without it, and the record and the log say why."""
        credential = self._credentials.get(name)
        if credential is None:
            return None
        origin = url_origin(url)
        withheld = credential_withheld(origin, credential.origin, name)
        if withheld is None and origin is not None:
            entry["credential"] = f"sent to {origin}"
            return BoundHeader(origin, credential.header, credential.value)
        entry["credential"] = f"not sent: {withheld}"
        log(logger, logging.WARNING, "agent.mcp_credential_withheld", server=name, reason=withheld)
        return None

    # --- calling

    def _call(
        self, server: _Server, tool: str, arguments: dict[str, Any], timeout: float, nonce: str
    ) -> tuple[str, bool]:
        assert self._portal is not None and server.client is not None
        future = self._portal.start_task_soon(_call_tool, server.client, tool, arguments, timeout)
        try:
            result = self._wait(future, server, timeout)
        except SERVER_FAULTS as error:
            return self._fault(server, error, "answer"), True
        text = self._mask(_result_text(result))
        limit = self._limits.output_chars
        if len(text) > limit:
            text = text[:limit] + f"\n[... {len(text) - limit} characters cut ...]"
        label = f"result of {shown_name(server.config.name, tool)} (MCP server output)"
        return fence(label, text, nonce), bool(result.is_error)

    def _wait(self, future: Any, server: _Server, timeout: float | None = None) -> Any:
        try:
            return future.result(timeout=(timeout or self._limits.timeout) + GRACE_SECONDS)
        except FutureTimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer from MCP server {server.config.name}") from None

    def _fault(self, server: _Server, error: BaseException, doing: str) -> str:
        """Cut the server off, and say why in words the model and the job page read."""
        name = server.config.name
        if server.guard.too_large:
            why = f"sent a message over {self._limits.max_bytes} bytes"
        elif _timed_out(error):
            why = f"did not {doing} within {self._limits.timeout:.0f} s"
        else:
            why = f"failed to {doing} ({_describe(error, self._mask)})"
        server.cut_off = f"[the MCP server {name} {why}, so it was cut off; its tools are gone]"
        if server.guard.end is not None:
            server.guard.end()  # a stdio server that hangs holds the sandbox's pids and memory
        log(logger, logging.WARNING, "agent.mcp_cut_off", server=name, reason=why)
        return server.cut_off


@asynccontextmanager
async def _in_sandbox(sandbox: Sandbox, argv: list[str], guard: Guard) -> AsyncIterator[Any]:
    attached = await anyio.to_thread.run_sync(sandbox.attach, argv)
    async with sandbox_stdio(attached, guard) as streams:
        yield streams


async def _list_tools(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _page in range(10):
        listed = await client.list_tools(cursor=cursor)
        tools.extend(listed.tools)
        cursor = listed.next_cursor
        if cursor is None:
            break
    return tools


async def _call_tool(
    client: Client, tool: str, arguments: dict[str, Any], timeout: float
) -> mcp_types.CallToolResult:
    with anyio.fail_after(timeout + 1):
        return await client.call_tool(tool, arguments, read_timeout_seconds=timeout)


def _schema(shown: str, tool: mcp_types.Tool) -> dict[str, Any]:
    description = (tool.description or tool.name)[:DESCRIPTION_CHARS]
    parameters = tool.input_schema if tool.input_schema.get("type") == "object" else {}
    return {
        "type": "function",
        "function": {
            "name": shown,
            "description": f"(MCP) {description}",
            "parameters": parameters or {"type": "object", "properties": {}},
        },
    }


def _result_text(result: mcp_types.CallToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts) or "(no content)"


def _timed_out(error: BaseException) -> bool:
    if isinstance(error, ExceptionGroup):
        return any(_timed_out(inner) for inner in error.exceptions)
    return isinstance(error, TimeoutError | httpx2.TimeoutException) or (
        isinstance(error, MCPError) and "timed out" in str(error).lower()
    )


def _describe(error: BaseException, mask: Callable[[str], str]) -> str:
    """The error in one short line, masked before it is cut."""
    if isinstance(error, ExceptionGroup):
        return "; ".join(_describe(inner, mask) for inner in error.exceptions[:3])
    return f"{type(error).__name__}: {mask(str(error))[:300]}"
