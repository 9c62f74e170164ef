"""`mcp:` in `.resolver/config.yml`: what a repository may name, and how a bad entry is refused."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet

from resolver.agent.mcp_config import (
    McpConfigError,
    McpServer,
    parse_mcp_config,
    servers_from,
    shown_name,
)
from resolver.core.settings import Settings
from resolver.core.states import Outcome
from resolver.worker.values import ended_by
from sandbox import Allowance

HOSTS = Allowance(("tracker.example",))
KEY = Fernet.generate_key().decode()


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, secret_keys=KEY, **values)


def parse(section: object) -> tuple[McpServer, ...]:
    return parse_mcp_config({"mcp": section}, HOSTS)


def test_stdio_and_remote_servers_with_their_tool_lists() -> None:
    docs, tracker = parse(
        {
            "docs": {"command": ["python3", "docs.py"], "tools": {"allow": ["search"]}},
            "tracker": {"url": "https://mcp.tracker.example/mcp", "tools": {"deny": ["drop"]}},
        }
    )
    assert (docs.command, docs.remote, tracker.remote) == (("python3", "docs.py"), False, True)
    assert docs.shows("search") and not docs.shows("other")
    assert tracker.shows("lookup") and not tracker.shows("drop")
    assert shown_name("docs", "search") == "docs__search"


def test_no_section_means_no_servers() -> None:
    assert parse_mcp_config({}, HOSTS) == ()


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ([1], "`mcp` must be a mapping"),
        ({"Docs!": {"command": ["x"]}}, "`mcp.Docs!`"),
        ({"docs": "python3 x.py"}, "`mcp.docs` must be a mapping"),
        ({"docs": {"command": ["x"], "url": "https://tracker.example"}}, "`mcp.docs` needs"),
        ({"docs": {}}, "`mcp.docs` needs"),
        ({"docs": {"command": ["x"], "env": {"A": "b"}}}, "`mcp.docs` has unknown keys: env"),
        ({"docs": {"command": []}}, "`mcp.docs.command`"),
        ({"docs": {"command": ["x"], "tools": {"allow": "search"}}}, "`mcp.docs.tools.allow`"),
        ({"docs": {"command": ["x"], "tools": {"only": []}}}, "`mcp.docs.tools`"),
        ({"t": {"url": "ftp://tracker.example/mcp"}}, "`mcp.t.url` must be an http(s) URL"),
        ({"t": {"url": "https://u:p@tracker.example/mcp"}}, "must not carry a credential"),
        ({"t": {"url": "https://evil.example/mcp"}}, "the host evil.example is not one"),
        ({f"s{i}": {"command": ["x"]} for i in range(9)}, "at most 8"),
    ],
)
def test_a_bad_entry_is_refused_by_name(section: Any, named: str) -> None:
    with pytest.raises(McpConfigError) as refused:
        parse(section)
    assert named in str(refused.value)


def test_the_refusal_ends_the_job_as_refused_with_the_entry_named() -> None:
    with pytest.raises(McpConfigError) as refused:
        parse({"t": {"url": "https://evil.example/mcp"}})
    ended = ended_by(refused.value)
    assert ended.outcome == Outcome.REFUSED and "`mcp.t.url`" in (ended.error or "")


def test_remote_hosts_come_from_the_operator_and_mcp_off_turns_it_all_off() -> None:
    config = {"mcp": {"t": {"url": "https://mcp.tracker.example/mcp"}}}
    with pytest.raises(McpConfigError, match="RESOLVER_MCP_ALLOW"):
        servers_from(settings(mcp_allow=""), config)
    assert len(servers_from(settings(mcp_allow="tracker.example"), config)) == 1
    bad = {"mcp": {"t": {"url": "https://evil.example/mcp"}}}
    assert servers_from(settings(mcp="off"), bad) == ()
