"""`resolver mcp`: a remote MCP server's credential goes into the vault from standard input,
is listed without its value, and can be removed."""

from __future__ import annotations

from resolver.store.db import session_scope
from resolver.store.mcp_credentials import mcp_credentials
from resolver.store.vault import Vault
from tests.cli.test_cli_api import cli

VALUE = "Bearer mcp-cli-5e3c2b1a"


def test_set_list_and_remove_a_servers_credential(resolver_env) -> None:
    env = resolver_env.child_env()
    stored = cli(env, "mcp", "set", "acme/app", "tracker", stdin=f"{VALUE}\n")
    assert stored.returncode == 0, stored.stdout
    listed = cli(env, "mcp", "list")
    assert "acme/app" in listed.stdout and "tracker" in listed.stdout
    assert "Authorization" in listed.stdout and "mcp-cli" not in listed.stdout
    vault = Vault([resolver_env.vars["RESOLVER_SECRET_KEYS"]])
    with session_scope() as session:
        found = mcp_credentials(session, vault, "acme/app", ("tracker", "docs"))
    assert {k: (h, v.reveal()) for k, (h, v) in found.items()} == {
        "tracker": ("Authorization", VALUE)
    }
    assert b"mcp-cli-5e3c2b1a" not in (resolver_env.tmp / "resolver.db").read_bytes()
    removed = cli(env, "mcp", "remove", "acme/app", "tracker")
    assert removed.returncode == 0, removed.stdout
    again = cli(env, "mcp", "remove", "acme/app", "tracker")
    assert again.returncode == 1 and "no stored credential" in again.stdout


def test_bad_input_is_refused_and_stores_nothing(resolver_env) -> None:
    env = resolver_env.child_env()
    empty = cli(env, "mcp", "set", "acme/app", "tracker")
    assert empty.returncode == 1 and "standard input" in empty.stdout
    bad_server = cli(env, "mcp", "set", "acme/app", "Tracker!", stdin="x\n")
    assert bad_server.returncode == 1 and "server's name" in bad_server.stdout
    bad_header = cli(env, "mcp", "set", "acme/app", "t", "--header", "A: b", stdin="x\n")
    assert bad_header.returncode == 1 and "header" in bad_header.stdout
    assert "acme/app" not in cli(env, "mcp", "list").stdout
