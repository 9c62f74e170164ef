"""The `resolver` command line."""

from __future__ import annotations

import sys

import typer

from integrations import registry
from resolver.broker import celery_app
from resolver.cli import admin, backup, budgets, jobs, routes, run, schedules, services, setup
from resolver.cli import mcp as mcp_cli
from resolver.cli import sandbox as sandbox_cli
from resolver.core import version
from resolver.core.settings import ConfigError, get_settings
from resolver.store import configured, db

app = typer.Typer(
    help="Resolver: @mention a bot, get a pull request.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"resolver {version.current()}")
        raise typer.Exit()


@app.callback()
def _root(
    _version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print this release's version and exit.",
    ),
) -> None:
    """Resolver: @mention a bot, get a pull request."""


services.register(app)
admin.register(app)
app.add_typer(jobs.app, name="jobs")
app.command("run")(run.run)
app.add_typer(sandbox_cli.app, name="sandbox")
app.add_typer(routes.app, name="routes")
app.add_typer(schedules.app, name="schedules")
app.add_typer(setup.app, name="setup")
app.add_typer(mcp_cli.app, name="mcp")
app.command("budgets")(budgets.budgets)
app.command("backup")(backup.backup)
app.command("restore")(backup.restore)


def main() -> None:
    """Entry point: a bad setting ends the command with one clear line."""
    get_settings.compose(registry.settings_classes)
    configured.install()
    # Read when first asked: a command whose settings do not load still starts and says why.
    db.use_database(lambda: get_settings().database_url)
    celery_app.use_settings(get_settings)
    try:
        app()
    except ConfigError as error:
        print(f"resolver: configuration error: {error}", file=sys.stderr)
        sys.exit(2)
