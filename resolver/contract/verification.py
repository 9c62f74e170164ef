"""Proof of work as a value: the checks a job's trajectory shows, as stored in its result. Pure.

The agent builds it (`resolver.agent.verify`); the callbacks render it into the pull request and
the status message. It lives here, below both, so that reading a job's result never loads the
agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Final, Literal

from pydantic import JsonValue

CheckKind = Literal["test", "lint", "build"]
KINDS: Final[tuple[CheckKind, ...]] = ("test", "lint", "build")


@dataclass(frozen=True)
class Check:
    """One distinct command line that builds, tests or lints, as it last ran."""

    command: str
    kind: CheckKind
    exit_code: int | None
    runs: int
    timed_out: bool = False
    passes: int = 0
    """How many of its runs passed (an earlier pass does not make a failing last run pass)."""
    masked: bool = False
    """Its exit code is not the runner's own (piped into another command, or `|| true`)."""

    @property
    def result(self) -> Literal["passed", "failed", "unknown"]:
        if self.timed_out or (self.exit_code not in (None, 0) and not self.masked):
            return "failed"
        if self.masked or self.exit_code is None:
            return "unknown"
        return "passed"


@dataclass(frozen=True)
class Verification:
    checks: tuple[Check, ...] = ()
    not_run: tuple[CheckKind, ...] = ()
    """The kinds of check that never ran (tests and lint always; build when configured)."""

    def as_dict(self) -> dict[str, JsonValue]:
        return {"checks": [asdict(check) for check in self.checks], "not_run": list(self.not_run)}


def verification_of(data: object) -> Verification | None:
    """A Verification from `as_dict`'s JSON (a job's result); None when absent or unreadable."""
    if not isinstance(data, Mapping):
        return None
    try:
        checks = tuple(Check(**dict(check)) for check in data.get("checks") or ())
        not_run = tuple(kind for kind in data.get("not_run") or () if kind in KINDS)
    except TypeError:
        return None
    return Verification(checks, not_run)
