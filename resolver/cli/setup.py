"""`resolver setup …`: set up providers from a shell, as `/setup` does in the browser.

`resolver setup url` prints the operator's link to /setup; `resolver setup <provider>` is each
installed provider's command (`contract.setup.SetupCommand`, or its webhook's), built here from
its options. Tokens and secrets are read from standard input, never from the command line, and
never printed.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from integrations import registry
from resolver.contract.setup import CliOption, CommandInput, OptionValue, SetupCommand, SetupError
from resolver.core.settings import get_settings
from resolver.onboarding.described import command_of
from resolver.onboarding.operator import OPERATOR_LINK_SECONDS, operator_url
from resolver.onboarding.store import VaultStore

console = Console()
app = typer.Typer(
    help="Set up providers: the operator's link to /setup, each provider's app or webhook.",
    no_args_is_help=True,
)

KINDS: dict[str, type] = {"text": str, "flag": bool, "int": int, "float": float}


def fail(message: str) -> NoReturn:
    console.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(1)


class _Terminal:
    """The operator's terminal, for a provider's command (`contract.setup.SetupConsole`)."""

    def say(self, text: str) -> None:
        console.print(escape(text), soft_wrap=True)

    def read_lines(self, what: str) -> list[str]:
        lines = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
        if not lines:
            raise SetupError(
                f'no {what} on standard input; pipe it in: `printf %s "$TOKEN" | resolver setup …`'
            )
        return lines


@app.command("url")
def setup_url() -> None:
    """Print a link that opens /setup as an admin, before anyone can sign in."""
    typer.echo(operator_url(get_settings()))
    typer.echo(f"(it works for {OPERATOR_LINK_SECONDS // 60} minutes)", err=True)


def _parameter(option: CliOption) -> inspect.Parameter:
    kind = KINDS[option.kind]
    annotation = kind if option.default is not None else kind | None
    default = typer.Option(option.default, *option.flags, help=option.help)
    return inspect.Parameter(
        option.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _command(command: SetupCommand) -> Callable[..., None]:
    """A Typer command whose options are the provider's; it runs the provider's `run`."""

    def run(**options: OptionValue) -> None:
        settings = get_settings()
        given = CommandInput(settings, VaultStore(settings), options, _Terminal())
        try:
            command.run(given)
        except SetupError as error:
            fail(str(error))

    parameters = [_parameter(option) for option in command.options]
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {item.name: item.annotation for item in parameters}
    run.__doc__ = command.help
    return run


def add_provider_commands(setup: typer.Typer) -> None:
    """`resolver setup <name>` for each installed provider that has a command."""
    for provider in registry.installed():
        command = command_of(provider)
        if command is not None:
            setup.command(provider.name)(_command(command))


add_provider_commands(app)
