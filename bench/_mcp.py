"""An MCP tool call's cost beside a shell command's, for bench/agent.py: the same sandbox runs
a stdio server (the `mcp` SDK, carried in as a repository would) and a trivial command, and a
streamable-HTTP server on loopback answers the host. Each figure is the median of `calls`
calls through `McpTools.run`, the path the loop takes (fencing and caps included)."""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.mcp_servers import STDIO_SERVER, remote_mcp, vendor_mcp

if TYPE_CHECKING:
    from sandbox import Sandbox


@dataclass(frozen=True)
class McpFigures:
    stdio_start: float
    remote_start: float
    stdio_call: float
    remote_call: float
    shell: float


def _archive(root: Path, uid: int) -> io.BytesIO:
    data = io.BytesIO()

    def owned(member: tarfile.TarInfo) -> tarfile.TarInfo:
        member.uid = member.gid = uid
        return member

    with tarfile.open(fileobj=data, mode="w") as archive:
        archive.add(root, arcname=".", filter=owned)
    data.seek(0)
    return data


Median = Callable[[int, Callable[[int], object]], float]
SERVERS = (
    ("stdio", {"command": ["python3", "docs_server.py"]}, "stdio__search", '{"query": "q"}'),
    ("remote", {}, "remote__lookup", '{"key": "K-1"}'),
)


def bench_mcp(tmp: Path, calls: int, median: Median) -> McpFigures:
    from resolver.agent.sandboxes import policy_from_settings
    from resolver.core.settings import get_settings
    from sandbox import open_sandbox

    root = tmp / "mcp-repo"
    vendor_mcp(root / "vendor")
    (root / "docs_server.py").write_text(STDIO_SERVER)
    policy = policy_from_settings(get_settings())
    figures: dict[str, float] = {}
    with remote_mcp("bench-token") as remote, open_sandbox("999998", policy) as sandbox:
        sandbox.load(_archive(root, sandbox.policy.user))
        sandbox.run("true")
        for name, entry, tool, args in SERVERS:
            config = entry or {"url": remote.url}
            start, call = _one_server(sandbox, name, config, tool, args, calls, median)
            figures[f"{name}_start"], figures[f"{name}_call"] = start, call
        figures["shell"] = median(calls, lambda n: sandbox.run(f"echo step {n}"))
    return McpFigures(**figures)


def _one_server(
    sandbox: Sandbox,
    name: str,
    entry: dict[str, object],
    tool: str,
    args: str,
    calls: int,
    median: Median,
) -> tuple[float, float]:
    """Seconds to start and list the server, and the median seconds of one call."""
    from resolver.agent.mcp import Credential, McpLimits, McpTools
    from resolver.agent.mcp_config import parse_mcp_config
    from sandbox import Allowance

    servers = parse_mcp_config({"mcp": {name: entry}}, Allowance(("localhost",)))
    bound = str(entry["url"]) if "url" in entry else None  # the credential's own server
    credentials = {"remote": Credential("Authorization", "Bearer bench-token", bound)}
    limits = McpLimits(30.0, 1_000_000, 30_000)
    started = time.perf_counter()
    with McpTools(servers, sandbox, credentials, limits) as tools:
        start = time.perf_counter() - started
        return start, median(calls, lambda _n: tools.run(tool, args, 60, "nonce"))


def print_mcp(figures: McpFigures, calls: int) -> None:
    ms = 1000
    print(f"MCP tool calls beside a shell command; milliseconds, median of {calls}")
    print(f"MCP call, stdio (in the sandbox)  {figures.stdio_call * ms:7.1f}")
    print(f"MCP call, remote (from the host)  {figures.remote_call * ms:7.1f}")
    print(f"shell command in the sandbox      {figures.shell * ms:7.1f}")
    print(f"MCP start, stdio (once per job)   {figures.stdio_start * ms:7.1f}")
    print(f"MCP start, remote (once per job)  {figures.remote_start * ms:7.1f}")
