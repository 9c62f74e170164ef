"""`resolver mcp`: the credentials of a repository's remote MCP servers, kept in the vault."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.table import Table

from resolver.cli.transaction import in_transaction
from resolver.contract.mcp import credential_problem
from resolver.core.settings import get_settings
from resolver.store.mcp_credentials import (
    list_mcp_credentials,
    remove_mcp_credential,
    set_mcp_credential,
)
from resolver.store.vault import Vault

console = Console()
app = typer.Typer(help="Credentials of repositories' remote MCP servers.", no_args_is_help=True)


def fail(message: str) -> None:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


@app.command("set")
def mcp_set(
    repo: str = typer.Argument(..., help="The repository's full name, as its forge spells it."),
    server: str = typer.Argument(..., help="The server's name under `mcp:` in its config."),
    header: str = typer.Option("Authorization", help="The header the value is sent in."),
) -> None:
    """Store the header value a remote server is called with, read from standard input (never
    from the command line): `printf 'Bearer %s' "$TOKEN" | resolver mcp set org/repo tracker`."""
    value = sys.stdin.readline().strip()
    if not value:
        fail("no value on standard input; pipe it in")
    problem = credential_problem(repo, server, header, value)
    if problem:
        fail(problem)
    vault = Vault(get_settings().fernet_keys)
    in_transaction(set_mcp_credential, vault, repo, server, header, value)
    console.print(f"stored the {header} header of {repo}'s MCP server {server}")


@app.command("remove")
def mcp_remove(repo: str, server: str) -> None:
    """Forget a server's credential."""
    removed = in_transaction(remove_mcp_credential, repo, server)
    if not removed:
        fail(f"{repo} has no stored credential for {server}")
    console.print(f"removed the credential of {repo}'s MCP server {server}")


@app.command("list")
def mcp_list() -> None:
    """The stored credentials: repository, server and header (never the value)."""
    table = Table("repository", "server", "header")
    for stored in in_transaction(list_mcp_credentials):
        table.add_row(stored.repo, stored.server, stored.header)
    console.print(table)
