"""Requests that are commands to the bot rather than work: `@bot stop`, `@bot status`,
`@bot run <schedule>`, `@bot rebase`. Pure."""

from __future__ import annotations

import re
from typing import Final, Literal

Command = Literal["stop", "status", "run", "rebase"]

_COMMANDS: Final[dict[str, Command]] = {
    "stop": "stop",
    "cancel": "stop",
    "abort": "stop",
    "status": "status",
    "rebase": "rebase",
}
_WORDS: Final = re.compile(r"[a-z]+")
# One schedule name (`weekly-deps`), as schedules are named; "run the tests" is work, not this.
_RUN: Final = re.compile(r"run\s+(?:schedule\s+)?`?([a-z0-9][a-z0-9._-]*)`?(?:\s+now)?[.!]?", re.I)


def parse_command(task: str) -> Command | None:
    """The command when the whole request is one command word (`stop`, `stop please!`), or
    `run <schedule>`."""
    if schedule_to_run(task) is not None:
        return "run"
    words = _WORDS.findall(task.lower())
    if not words or len(words) > 2 or words[0] not in _COMMANDS:
        return None
    if len(words) == 2 and words[1] not in ("please", "now", "it", "job"):
        return None
    return _COMMANDS[words[0]]


def schedule_to_run(task: str) -> str | None:
    """The schedule that `run <schedule>` names (`run weekly-deps`), or None."""
    found = _RUN.fullmatch(task.strip())
    return found.group(1).lower() if found else None


# Commands that are work on a branch (`@bot rebase`): a job with a status, not a reply.
WORK: Final[frozenset[Command]] = frozenset({"rebase"})


def is_answered(task: str) -> bool:
    """Whether the request is a command answered by a reply (no status message)."""
    command = parse_command(task)
    return command is not None and command not in WORK
