"""Sixth's set-up, as `integrations/<name>/setup.py` describes one: its /setup section from its
own template, a button (`/setup/sixth/knock`), `resolver setup sixth`, and an offline check for
`resolver doctor`. Nothing in Resolver names it."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from resolver.contract.checks import Check
from resolver.contract.setup import (
    ActionInput,
    Answer,
    CliOption,
    CommandInput,
    Flash,
    ProviderSetup,
    SectionInput,
    SetupCommand,
    SetupError,
    SetupSection,
    WebAction,
)
from resolver.core.settings import Settings

DOOR_CHECK: Final = "sixth door"


def _section_values(given: SectionInput) -> dict[str, object]:
    return {"greeting": f"Sixth greets {given.settings.public_url}"}


def _knock(given: ActionInput) -> Answer:
    door = given.values.get("door", "").strip()
    if not door:
        raise SetupError("name the door")
    return Flash(f"Knocked on the {door} door.")


def _command(given: CommandInput) -> None:
    lines = given.console.read_lines("Sixth key")
    given.console.say(f"knocked on the {given.options['door']} door with {len(lines)} key(s)")


def _checks(_settings: Settings) -> list[Check]:
    return [Check(DOOR_CHECK, "fail", "the door is shut: knock with `resolver setup sixth`")]


SETUP: Final = ProviderSetup(
    section=SetupSection(fields=(), template="setup.html", values=_section_values),
    actions=(WebAction("knock", "POST", _knock),),
    templates=Path(__file__).parent / "templates",
    command=SetupCommand(
        help="Knock on Sixth (standard input: a key).",
        options=(CliOption("door", ("--door",), "Which door.", "front"),),
        run=_command,
    ),
    config_checks=_checks,
)
