"""`resolver sandbox …` commands (owned by the sandbox work)."""

import typer

app = typer.Typer(help="Build, run, list and reap sandbox containers.", no_args_is_help=True)
