"""Requests that are commands to the bot rather than work: `@bot stop`, `@bot status`. Pure."""

from __future__ import annotations

import re
from typing import Final, Literal

Command = Literal["stop", "status"]

_COMMANDS: Final[dict[str, Command]] = {
    "stop": "stop",
    "cancel": "stop",
    "abort": "stop",
    "status": "status",
}
_WORDS: Final = re.compile(r"[a-z]+")


def parse_command(task: str) -> Command | None:
    """The command when the whole request is one command word (`stop`, `stop please!`)."""
    words = _WORDS.findall(task.lower())
    if not words or len(words) > 2 or words[0] not in _COMMANDS:
        return None
    if len(words) == 2 and words[1] not in ("please", "now", "it", "job"):
        return None
    return _COMMANDS[words[0]]
