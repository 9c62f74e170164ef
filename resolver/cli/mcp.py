"""`resolver mcp`: the credentials of a repository's remote MCP servers, kept in the vault,
each bound to the origin of the server it is for."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console
from rich.table import Table

from resolver.cli.transaction import in_transaction
from resolver.contract.mcp import Origin, OriginError, credential_problem, parse_origin
from resolver.core.settings import get_settings
from resolver.store.mcp_credentials import (
    bind_mcp_credential,
    list_mcp_credentials,
    remove_mcp_credential,
    set_mcp_credential,
)
from resolver.store.vault import Vault

console = Console()
app = typer.Typer(help="Credentials of repositories' remote MCP servers.", no_args_is_help=True)
UNBOUND = "none: not sent until bound (`resolver mcp bind`)"


def fail(message: str) -> NoReturn:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def _origin(url: str) -> Origin:
    try:
        return parse_origin(url)
    except OriginError as error:
        fail(str(error))


@app.command("set")
def mcp_set(
    repo: str = typer.Argument(..., help="The repository's full name, as its forge spells it."),
    server: str = typer.Argument(..., help="The server's name under `mcp:` in its config."),
    url: str = typer.Option(
        ...,
        "--url",
        help="The server's URL (or origin); the credential is sent to that scheme, host and "
        "port alone, over https (plain http only to this machine).",
    ),
    header: str = typer.Option("Authorization", help="The header the value is sent in."),
) -> None:
    """Store the header value a remote server is called with, read from standard input (never
    from the command line): `printf 'Bearer %s' "$TOKEN" | resolver mcp set org/repo tracker
    --url https://mcp.tracker.example/mcp`."""
    value = sys.stdin.readline().strip()
    if not value:
        fail("no value on standard input; pipe it in")
    problem = credential_problem(repo, server, header, value)
    if problem:
        fail(problem)
    origin = _origin(url)
    vault = Vault(get_settings().fernet_keys)
    in_transaction(set_mcp_credential, vault, repo, server, header, value, origin)
    console.print(f"stored the {header} header of {repo}'s MCP server {server}, for {origin}")


@app.command("bind")
def mcp_bind(
    repo: str = typer.Argument(..., help="The repository's full name, as its forge spells it."),
    server: str = typer.Argument(..., help="The server's name under `mcp:` in its config."),
    url: str = typer.Argument(..., help="The server's URL (or origin), https or loopback http."),
) -> None:
    """Bind a stored credential to its server's origin, its value kept: one stored before
    credentials had an origin is not sent until it is bound."""
    origin = _origin(url)
    if not in_transaction(bind_mcp_credential, repo, server, origin):
        fail(f"{repo} has no stored credential for {server}")
    console.print(f"the credential of {repo}'s MCP server {server} is sent to {origin} alone")


@app.command("remove")
def mcp_remove(repo: str, server: str) -> None:
    """Forget a server's credential."""
    removed = in_transaction(remove_mcp_credential, repo, server)
    if not removed:
        fail(f"{repo} has no stored credential for {server}")
    console.print(f"removed the credential of {repo}'s MCP server {server}")


@app.command("list")
def mcp_list() -> None:
    """The stored credentials: repository, server, header and origin (never the value)."""
    table = Table("repository", "server", "header", "sent to")
    for stored in in_transaction(list_mcp_credentials):
        table.add_row(stored.repo, stored.server, stored.header, stored.origin or UNBOUND)
    console.print(table)
