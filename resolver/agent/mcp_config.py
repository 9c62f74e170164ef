"""The MCP servers a repository names in `.resolver/config.yml` on its default branch. Pure.

    mcp:
      docs:                                  # the server's name: its tools appear as docs__NAME
        command: [python3, tools/docs.py]    # stdio: the sandbox runs it, with no secrets
        tools: {allow: [search]}             # optional: only these tools, or
      tracker:
        url: https://mcp.tracker.example/mcp # streamable HTTP: the host calls it
        tools: {deny: [delete_issue]}        # every tool but these

A remote server's host must be one the operator allows (RESOLVER_MCP_ALLOW); its credential,
if any, is in the vault (`resolver mcp set`), never in this file, and is sent only when `url`
is on the origin the operator stored it for. A bad entry refuses the job and the error names it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from resolver.contract.mcp import SERVER_NAME
from sandbox import Allowance, split_list

if TYPE_CHECKING:
    from resolver.core.settings import Settings

MCP_KEY: Final = "mcp"
MAX_SERVERS: Final = 8
# A tool reaches the model as `<server>__<tool>`, and function names are [A-Za-z0-9_-]{1,64}.
SEPARATOR: Final = "__"
TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,40}")
_KEYS: Final = frozenset({"command", "url", "tools"})


class McpConfigError(ValueError):
    """`mcp` in `.resolver/config.yml` cannot be used; the message names the entry at fault."""


@dataclass(frozen=True)
class McpServer:
    """One server: `command` runs in the sandbox (stdio), or `url` is called from the host."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    allow: tuple[str, ...] | None = None
    """Only these tools are shown; None: all of them (less `deny`)."""
    deny: tuple[str, ...] = ()

    @property
    def remote(self) -> bool:
        return self.url is not None

    def shows(self, tool: str) -> bool:
        """Whether the repository's lists let the model see `tool`."""
        return (self.allow is None or tool in self.allow) and tool not in self.deny


def parse_mcp_config(repo_config: Mapping[str, object], hosts: Allowance) -> tuple[McpServer, ...]:
    """The servers of the repository's `mcp` section (none when absent), checked against the
    hosts the operator allows for remote servers; McpConfigError names a bad entry."""
    section = repo_config.get(MCP_KEY)
    if section is None:
        return ()
    if not isinstance(section, Mapping):
        raise McpConfigError("`mcp` must be a mapping from a server's name to its entry")
    if len(section) > MAX_SERVERS:
        raise McpConfigError(f"`mcp` names {len(section)} servers; at most {MAX_SERVERS}")
    return tuple(_server(str(name), entry, hosts) for name, entry in section.items())


def _server(name: str, entry: object, hosts: Allowance) -> McpServer:
    where = f"mcp.{name}"
    if not SERVER_NAME.fullmatch(name):
        raise McpConfigError(f"`{where}`: a server's name is a-z, 0-9 and -, up to 20 characters")
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"`{where}` must be a mapping with `command` or `url`")
    unknown = sorted(str(key) for key in entry if key not in _KEYS)
    if unknown:
        raise McpConfigError(f"`{where}` has unknown keys: {', '.join(unknown)}")
    if ("command" in entry) == ("url" in entry):
        raise McpConfigError(f"`{where}` needs either `command` (stdio) or `url` (remote)")
    allow, deny = _tool_lists(where, entry.get("tools"))
    if "command" in entry:
        return McpServer(name, command=_command(where, entry["command"]), allow=allow, deny=deny)
    return McpServer(name, url=_url(where, entry["url"], hosts), allow=allow, deny=deny)


def _command(where: str, value: object) -> tuple[str, ...]:
    words = [value] if isinstance(value, str) else value
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        raise McpConfigError(f"`{where}.command` must be a program and its arguments, as a list")
    if not all(words) or any("\0" in word for word in words):
        raise McpConfigError(f"`{where}.command` has an empty or invalid word")
    return tuple(words)


def _url(where: str, value: object, hosts: Allowance) -> str:
    if not isinstance(value, str):
        raise McpConfigError(f"`{where}.url` must be a URL")
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise McpConfigError(f"`{where}.url` must be an http(s) URL")
    if parts.username or parts.password:
        raise McpConfigError(
            f"`{where}.url` must not carry a credential; an operator stores it: `resolver mcp set`"
        )
    if not hosts.allows(parts.hostname):
        raise McpConfigError(
            f"`{where}.url`: the host {parts.hostname} is not one the operator allows "
            "(RESOLVER_MCP_ALLOW)"
        )
    return value


def _tool_lists(where: str, value: object) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    if value is None:
        return None, ()
    if not isinstance(value, Mapping) or any(key not in ("allow", "deny") for key in value):
        raise McpConfigError(f"`{where}.tools` must be a mapping with `allow` and/or `deny`")
    allow = _names(f"`{where}.tools.allow`", value["allow"]) if "allow" in value else None
    deny = _names(f"`{where}.tools.deny`", value.get("deny", []))
    return allow, deny


def _names(where: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise McpConfigError(f"{where} must be a list of tool names")
    return tuple(value)


def shown_name(server: str, tool: str) -> str:
    """The name the model sees a server's tool by."""
    return f"{server}{SEPARATOR}{tool}"


def servers_from(settings: Settings, repo_config: Mapping[str, object]) -> tuple[McpServer, ...]:
    """The servers a job gets: none when the operator turned MCP off (RESOLVER_MCP=off)."""
    if settings.mcp == "off":
        return ()
    return parse_mcp_config(repo_config, Allowance(split_list(settings.mcp_allow)))
