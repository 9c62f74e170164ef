"""A job's egress record: the proxy's log entries, each tied to the command that was running
when it was made, and counted per host. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sandbox.squid import LogEntry


@dataclass(frozen=True)
class Window:
    """A command's run: from `start` to `end` (epoch seconds, the host's clock)."""

    start: float
    end: float
    command: str


@dataclass
class HostRecord:
    """Requests to one host: how many went through, how many were blocked, and the commands
    that met a block (first first)."""

    allowed: int = 0
    blocked: int = 0
    commands: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"allowed": self.allowed, "blocked": self.blocked, "commands": self.commands}


def command_at(windows: Sequence[Window], moment: float, slack: float = 0.5) -> str | None:
    """The command that ran at `moment`; None between commands (a background process). The
    proxy logs in milliseconds, so a request just inside a short command may look `slack`
    seconds outside it."""
    for margin in (0.0, slack):
        for window in reversed(windows):
            if window.start - margin <= moment <= window.end + margin:
                return window.command
    return None


def record(
    hosts: dict[str, HostRecord], entries: Iterable[LogEntry], windows: Sequence[Window]
) -> None:
    """Count `entries` into `hosts`, each blocked one with the command it happened during."""
    for entry in entries:
        counted = hosts.setdefault(entry.host, HostRecord())
        if not entry.blocked:
            counted.allowed += 1
            continue
        counted.blocked += 1
        command = command_at(windows, entry.time)
        if command is not None and command not in counted.commands:
            counted.commands.append(command)
