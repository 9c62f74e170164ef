"""`resolver mcp`: a remote MCP server's credential goes into the vault from standard input,
bound to the origin of the server's URL, is listed without its value, can be bound to another
origin or removed."""

from __future__ import annotations

from resolver.store.db import session_scope
from resolver.store.mcp_credentials import mcp_credentials
from resolver.store.vault import Vault
from tests.cli.test_cli_api import cli

VALUE = "Bearer mcp-cli-5e3c2b1a"
URL = "https://mcp.tracker.example/mcp"


def test_set_list_bind_and_remove_a_servers_credential(resolver_env) -> None:
    env = resolver_env.child_env()
    stored = cli(env, "mcp", "set", "acme/app", "tracker", "--url", URL, stdin=f"{VALUE}\n")
    assert stored.returncode == 0, stored.stdout
    assert "for https://mcp.tracker.example" in " ".join(stored.stdout.split())
    listed = cli(env, "mcp", "list")
    assert "acme/app" in listed.stdout and "tracker" in listed.stdout
    assert "Authorization" in listed.stdout and "mcp-cli" not in listed.stdout
    assert "https://mcp.tracker.example" in listed.stdout
    vault = Vault([resolver_env.vars["RESOLVER_SECRET_KEYS"]])
    with session_scope() as session:
        found = mcp_credentials(session, vault, "acme/app", ("tracker", "docs"))
    assert {k: (s.header, s.value.reveal(), s.origin) for k, s in found.items()} == {
        "tracker": ("Authorization", VALUE, "https://mcp.tracker.example")
    }
    assert b"mcp-cli-5e3c2b1a" not in (resolver_env.tmp / "resolver.db").read_bytes()
    bound = cli(env, "mcp", "bind", "acme/app", "tracker", "https://mcp2.tracker.example:8443/x")
    assert bound.returncode == 0, bound.stdout
    assert "https://mcp2.tracker.example:8443" in cli(env, "mcp", "list").stdout
    removed = cli(env, "mcp", "remove", "acme/app", "tracker")
    assert removed.returncode == 0, removed.stdout
    again = cli(env, "mcp", "remove", "acme/app", "tracker")
    assert again.returncode == 1 and "no stored credential" in again.stdout
    unknown = cli(env, "mcp", "bind", "acme/app", "tracker", URL)
    assert unknown.returncode == 1 and "no stored credential" in unknown.stdout


def test_bad_input_is_refused_and_stores_nothing(resolver_env) -> None:
    env = resolver_env.child_env()
    empty = cli(env, "mcp", "set", "acme/app", "tracker", "--url", URL)
    assert empty.returncode == 1 and "standard input" in empty.stdout
    no_url = cli(env, "mcp", "set", "acme/app", "tracker", stdin="x\n")
    assert no_url.returncode != 0 and "--url" in no_url.stdout + no_url.stderr
    bad_server = cli(env, "mcp", "set", "acme/app", "Tracker!", "--url", URL, stdin="x\n")
    assert bad_server.returncode == 1 and "server's name" in bad_server.stdout
    bad_header = cli(
        env, "mcp", "set", "acme/app", "t", "--url", URL, "--header", "A: b", stdin="x\n"
    )
    assert bad_header.returncode == 1 and "header" in bad_header.stdout
    plain = cli(env, "mcp", "set", "acme/app", "t", "--url", "http://mcp.example/", stdin="x\n")
    assert plain.returncode == 1 and "only sent over https" in " ".join(plain.stdout.split())
    assert "acme/app" not in cli(env, "mcp", "list").stdout
