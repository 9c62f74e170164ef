"""`resolver run`: the agent loop on a local repository, without webhooks (owned by the agent work)."""

import typer


def run(
    repo: str = typer.Option(..., help="Path or URL of the repository."),
    task: str = typer.Option(..., help="What the agent should do."),
) -> None:
    """Run the agent on a repository and print its trajectory, diff, cost and outcome."""
    typer.echo("the agent loop is not installed yet")
    raise typer.Exit(2)
