"""Default repositories per chat channel, tracker project or team."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from integrations import registry
from resolver.cli.transaction import in_transaction
from resolver.contract.errors import RouteError
from resolver.store.repo_defaults import all_routes, remove_route, set_route

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

console = Console()
app = typer.Typer(
    help="Which repository a chat channel, a tracker project or a team works on.",
    no_args_is_help=True,
)


@app.command("set")
def routes_set(
    provider: str = typer.Argument(..., help="A chat or tracker provider."),
    scope: str = typer.Argument(
        ..., help="What the provider routes by: a channel id, a project key or a team key."
    ),
    repo: str = typer.Argument(..., help="owner/name, or forge:owner/name."),
) -> None:
    """Set the default repository of a channel, project or team."""
    try:
        forge, name = registry.check_route(provider, repo)
        stored = in_transaction(_set, provider, scope, forge, name)
    except RouteError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(1) from None
    console.print(f"{provider} {scope} -> {stored}")


def _set(session: Session, provider: str, scope: str, forge: str, name: str) -> str:
    return set_route(session, provider, scope, forge, name).repo


@app.command("remove")
def routes_remove(provider: str, scope: str) -> None:
    """Forget a default repository."""
    removed = in_transaction(remove_route, provider, scope)
    if not removed:
        console.print(f"[red]error:[/red] no route for {provider} {scope}")
        raise typer.Exit(1)
    console.print(f"removed {provider} {scope}")


@app.command("list")
def routes_list() -> None:
    """List default repositories."""
    table = Table("provider", "scope", "repository")
    for row in in_transaction(_listed):
        table.add_row(*row)
    console.print(table)


def _listed(session: Session) -> list[tuple[str, str, str]]:
    return [(r.provider, r.scope, r.repo) for r in all_routes(session)]
