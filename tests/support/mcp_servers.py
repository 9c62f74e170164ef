"""MCP servers for tests, written with the `mcp` SDK: a stdio one that a repository carries and
the sandbox runs, and a streamable-HTTP one on a loopback port that demands a bearer token.

The sandbox has no network, so the stdio server's repository carries the SDK itself: the
packages are copied from this interpreter's site-packages (the sandbox's Python is 3.11 too).
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest
import uvicorn

# What `mcp.server.mcpserver` and its stdio transport import, with the metadata some read.
VENDORED: Final = [
    "_cffi_backend.cpython-311-x86_64-linux-gnu.so",
    "annotated_types",
    "anyio",
    "attrs",
    "cffi",
    "click",
    "cryptography",
    "httpx2",
    "idna",
    "jsonschema",
    "jsonschema_specifications",
    "jwt",
    "mcp",
    "mcp_types",
    "opentelemetry",
    "pydantic",
    "pydantic_core",
    "python_multipart",
    "referencing",
    "rpds",
    "sniffio",
    "sse_starlette",
    "starlette",
    "typing_extensions",
    "typing_inspection",
    "uvicorn",
    "watchfiles",
]
FLOOD_BYTES: Final = 3_000_000
"""What a flooding tool answers: three times the cap on one message (RESOLVER_MCP_MAX_BYTES's
default), so the cap cuts it, and small enough to be built and sent at once on a loaded machine,
before the call's timeout (50 MB took over 10 s there)."""
ANSWER: Final = "the docs say the answer is 42"

STDIO_SERVER: Final = f'''
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))
from mcp.server.mcpserver import MCPServer

app = MCPServer("docs")


@app.tool()
def search(query: str) -> str:
    """Search the project's docs."""
    return "{ANSWER} (asked: " + query + ")"


@app.tool()
def hang() -> str:
    """Never answers."""
    time.sleep(3600)
    return ""


@app.tool()
def flood() -> str:
    """Answers with far too much."""
    return "x" * {FLOOD_BYTES}


@app.tool()
def drop_tables() -> str:
    """A tool the repository denies."""
    return "dropped"


app.run()
'''


def vendor_mcp(dest: Path) -> None:
    """Copy the SDK and what it imports into `dest` (a `vendor` directory)."""
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    dest.mkdir(parents=True, exist_ok=True)
    for name in VENDORED:
        source = site / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source if source.exists() else site / f"{name}.py", dest)
    for info in site.glob("*.dist-info"):  # some read their own version or entry points
        shutil.copytree(info, dest / info.name, ignore=shutil.ignore_patterns("RECORD", "*.txt"))


@dataclass
class RemoteMcp:
    """A streamable-HTTP MCP server; `token` is the credential it demands."""

    url: str
    token: str
    seen_authorizations: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)


def _remote_app(remote: RemoteMcp) -> Any:
    from mcp.server.mcpserver import MCPServer
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response

    # Its default (INFO) would set a process without logging of its own to print every
    # library's INFO lines (bench/agent.py's output).
    app = MCPServer("tracker", log_level="WARNING")

    @app.tool()
    def lookup(key: str) -> str:
        """Look a ticket up."""
        remote.calls.append(key)
        return f"ticket {key}: the build is red since Tuesday"

    @app.tool()
    async def hang() -> str:
        """Never answers."""
        import anyio

        await anyio.sleep(3600)
        return ""

    @app.tool()
    def flood() -> str:
        """Answers with far too much."""
        return "y" * FLOOD_BYTES

    @app.tool()
    def expired() -> str:
        """Fails quoting the bare token it was sent, as servers' errors do."""
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError(f"token {remote.token} is expired or revoked")

    http = app.streamable_http_app(json_response=True, stateless_http=True)

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            auth = Request(scope).headers.get("authorization", "")
            remote.seen_authorizations.append(auth)
            if auth != f"Bearer {remote.token}":
                response: Response = PlainTextResponse("no", status_code=401)
                await response(scope, receive, send)
                return
        await http(scope, receive, send)

    return guarded, http


@contextmanager
def remote_mcp(token: str) -> Iterator[RemoteMcp]:
    """The server on a free loopback port, at `<url>` (its path is /mcp)."""
    remote = RemoteMcp("", token)
    guarded, http = _remote_app(remote)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await http(scope, receive, send)  # the session manager starts with it
            return
        await guarded(scope, receive, send)

    # A hung tool call (`hang`) is cancelled a second into the shutdown; the session manager
    # then stops with the app's lifespan, which a forced exit would leave pending.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_config=None, lifespan="on",
        timeout_graceful_shutdown=1,
    )  # fmt: skip
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    while not runner.started:
        if not thread.is_alive():
            pytest.fail("the MCP server did not start")
        time.sleep(0.01)
    port = runner.servers[0].sockets[0].getsockname()[1]
    remote.url = f"http://localhost:{port}/mcp"
    try:
        yield remote
    finally:
        runner.should_exit = True
        thread.join(timeout=10)
