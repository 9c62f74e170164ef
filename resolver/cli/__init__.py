"""The `resolver` command line.

A command's module is imported when that command runs or shows its help: the modules import
the store, the broker and the providers, which `resolver --version` and `resolver jobs --help`
do not need. `resolver --help` imports them all, for their help texts.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, Final

import typer
from typer.core import TyperGroup
from typer.main import get_group

from resolver.core import version

if TYPE_CHECKING:
    from typer import _click as click  # Typer vendors click: its commands are typer._click's

    from resolver.core.settings import ProviderSettings

COMMANDS: Final = {
    "serve": "services:serve",
    "worker": "services:worker",
    "beat": "services:beat",
    "doctor": "admin:doctor",
    "run": "run:run",
    "budgets": "budgets:budgets",
    "backup": "backup:backup",
    "restore": "backup:restore",
    "db": "services:db_app",
    "users": "admin:users_app",
    "tokens": "admin:tokens_app",
    "keys": "admin:keys_app",
    "jobs": "jobs:app",
    "sandbox": "sandbox:app",
    "routes": "routes:app",
    "schedules": "schedules:app",
    "setup": "setup:app",
    "mcp": "mcp:app",
}
"""Each command by name: `module:name` under `resolver.cli`, a function (a command) or a Typer
app (a group of commands), in the order `resolver --help` lists them."""


def build(name: str) -> click.Command:
    """Command `name`, its module imported now, built by Typer as `app.command(name)` or
    `app.add_typer(…, name=name)` builds it: the same options, help and exit codes."""
    module, _, attribute = COMMANDS[name].partition(":")
    found = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    holder = typer.Typer()
    if isinstance(found, typer.Typer):
        holder.add_typer(found, name=name)
    else:
        holder.command(name)(found)
    return get_group(holder).commands[name]


class _Commands(MutableMapping[str, "click.Command"]):
    """The root's commands by name (`TyperGroup.commands`): every name is known at once (for
    help and for suggesting one), and a command is built when it is first looked up."""

    def __init__(self) -> None:
        self._built: dict[str, click.Command] = {}

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._built

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = build(name)
        return self._built[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(COMMANDS), **self._built})

    def __len__(self) -> int:
        return len(COMMANDS.keys() | self._built.keys())


class RootGroup(TyperGroup):
    """`resolver`: its commands are `_Commands`, so running one, showing its help or
    suggesting one for a mistyped name imports only what that needs; and a command runs with
    the settings handed down, a bad setting ending it with one clear line."""

    def __init__(self, **attrs: object) -> None:
        super().__init__(**attrs)  # type: ignore[arg-type]
        self.commands = _Commands()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        # Not `.get`: it would take a KeyError from a module's import for "no such command".
        return self.commands[cmd_name] if cmd_name in self.commands else None  # noqa: SIM401

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def invoke(self, ctx: click.Context) -> object:
        # Only a command that runs reads settings (`--version` and `--help` end before this).
        from resolver.core.settings import ConfigError

        _hand_settings_down()
        try:
            return super().invoke(ctx)
        except ConfigError as error:
            print(f"resolver: configuration error: {error}", file=sys.stderr)
            raise typer.Exit(2) from None


app = typer.Typer(
    cls=RootGroup,
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


def _hand_settings_down() -> None:
    """Compose the settings with the installed providers' sections, have their secrets masked,
    and say where the store and the broker read them."""
    from resolver.broker import celery_app
    from resolver.core.logs import register_secret
    from resolver.core.settings import get_settings
    from resolver.store import configured, db

    get_settings.compose(_provider_settings)
    get_settings.mask_with(register_secret)
    configured.install()
    # Read when first asked: a command whose settings do not load still starts and says why.
    db.use_database(lambda: get_settings().database_url)
    celery_app.use_settings(get_settings)


def _provider_settings() -> tuple[type[ProviderSettings], ...]:
    """The registry's settings classes, imported when the settings are first read."""
    from integrations import registry

    return registry.settings_classes()


def main() -> None:
    """Entry point (`resolver`)."""
    app()
