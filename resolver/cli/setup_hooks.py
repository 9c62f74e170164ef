"""`resolver setup slack|gitlab|jira|linear`: create the Slack app, register the GitLab, Jira and
Linear webhooks, and rotate their secrets. Tokens and secrets are read from standard input,
never from the command line, and never printed."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from integrations.slack import setup as slack
from resolver.contract.setup import SetupError
from resolver.onboarding import hooks

console = Console()
app = typer.Typer(
    help="Set up Slack, GitLab, Jira and Linear: the app, the webhooks, their secrets.",
    no_args_is_help=True,
)

ROTATE_HELP = "Give the webhook a new secret (the provider first, then the vault)."


def _fail(message: str) -> NoReturn:
    console.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(1)


def _stdin_lines(what: str) -> list[str]:
    lines = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
    if not lines:
        _fail(f'no {what} on standard input; pipe it in: `printf %s "$TOKEN" | resolver setup …`')
    return lines


@app.command("slack")
def setup_slack(
    rotate: bool = typer.Option(
        False, "--rotate", help="Store a signing secret regenerated on the app's page."
    ),
) -> None:
    """Create the Slack app from its manifest (standard input: an app configuration token, and
    on a second line its refresh token), then print the install link."""
    try:
        if rotate:
            slack.rotate_signing_secret(_stdin_lines("signing secret")[0])
            console.print("stored the new Slack signing secret in the vault")
            return
        lines = _stdin_lines("app configuration token")
        created = slack.create_app(lines[0], lines[1] if len(lines) > 1 else None)
    except SetupError as error:
        _fail(str(error))
    note = " (the configuration token had expired and was rotated)" * created.rotated_config_token
    console.print(f"created Slack app {created.app_id}{note}; its credentials are in the vault")
    console.print("install it in your workspace (as a Resolver admin, signed in):")
    console.print(escape(created.install_url), soft_wrap=True)


def _register(name: str, scope: str | None, rotate: bool) -> None:
    credential = _stdin_lines(f"{name} admin token")[0]
    try:
        result = hooks.register_hook(name, credential, scope, rotate=rotate)
    except SetupError as error:
        _fail(str(error))
    verb = "rotated the secret of" if rotate else ("registered" if result.created else "updated")
    console.print(f"{verb} the {name} webhook {result.hook_id} at {escape(result.url)}")
    console.print(f"events: {', '.join(result.events)}")
    console.print(f"stored in the vault: {', '.join(result.stored)}")
    if result.tested:
        console.print("a test delivery was requested; it arrives signed with the new secret")


@app.command("gitlab")
def setup_gitlab(
    project: str | None = typer.Option(None, help="The project (group/name or id)."),
    group: str | None = typer.Option(None, help="A group instead (group hooks need Premium)."),
    rotate: bool = typer.Option(False, "--rotate", help=ROTATE_HELP),
) -> None:
    """Register the GitLab webhook (standard input: a token with Maintainer, or Owner for a
    group, and the api scope)."""
    if (project is None) == (group is None):
        _fail("give exactly one of --project or --group")
    _register("gitlab", f"project:{project}" if project else f"group:{group}", rotate)


@app.command("jira")
def setup_jira(
    project: str | None = typer.Option(None, help="Only this project's issues (its key)."),
    rotate: bool = typer.Option(False, "--rotate", help=ROTATE_HELP),
) -> None:
    """Register the Jira admin webhook on RESOLVER_JIRA_URL (standard input: email:api_token
    of a Jira admin)."""
    _register("jira", project, rotate)


@app.command("linear")
def setup_linear(
    team: str | None = typer.Option(None, help="Only this team (its id); default all public."),
    rotate: bool = typer.Option(False, "--rotate", help=ROTATE_HELP),
) -> None:
    """Register the Linear webhook (standard input: a workspace admin's API key)."""
    _register("linear", team, rotate)
