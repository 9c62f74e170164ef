"""What a scheduled run does with the schedule's pull request. Pure.

One open pull request per schedule, as Renovate keeps one per branch:
- while it is open, a run updates its branch;
- once someone else has pushed to that branch, the bot leaves it alone (and says so once);
- merged: the next run proposes afresh;
- closed without merging: "don't propose this again" until the schedule's inputs change.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

OPEN: Final = "open"
DECLINED: Final = "declined"


class Finding(StrEnum):
    """What this run found of the pull request the schedule remembers."""

    NONE = "none"  # none remembered as open
    OPEN = "open"  # still open, and only the bot has pushed to its branch
    EDITED = "edited"  # still open, and someone else has pushed to its branch
    MERGED = "merged"  # closed, and its changes are on the default branch
    DECLINED = "declined"  # closed without merging
    NEVER_OPENED = "never_opened"  # the branch was pushed, but no pull request came of it


class Action(StrEnum):
    PROPOSE = "propose"  # work from the default branch; a new branch and pull request
    UPDATE = "update"  # work on the open pull request's branch
    SKIP_EDITED = "skipped_edited"
    SKIP_DECLINED = "skipped_declined"


@dataclass(frozen=True)
class Remembered:
    """The schedule's pull request as the bot remembers it (the `pull_*` columns)."""

    state: str | None = None
    branch: str | None = None
    head: str | None = None
    inputs: str | None = None


@dataclass(frozen=True)
class Decision:
    action: Action
    remembered: Remembered
    """What the schedule remembers from now on."""


def decide(remembered: Remembered, finding: Finding, inputs: str) -> Decision:
    """The run's action, given what it found and the digest of its inputs now."""
    if finding is Finding.OPEN:
        return Decision(Action.UPDATE, remembered)
    if finding is Finding.EDITED:
        return Decision(Action.SKIP_EDITED, remembered)
    if finding is Finding.DECLINED:
        remembered = replace(remembered, state=DECLINED)
    elif finding in (Finding.MERGED, Finding.NEVER_OPENED):
        remembered = Remembered()
    if remembered.state == DECLINED and remembered.inputs == inputs:
        return Decision(Action.SKIP_DECLINED, remembered)
    return Decision(Action.PROPOSE, remembered)
