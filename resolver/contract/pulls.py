"""The bot's own pull requests as events tell of them, and a repository's standing with the bot:
what intake reads to know, without a forge call, whether an event can concern the bot. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

if TYPE_CHECKING:
    from resolver.contract.inbound import Policy, WebhookEvent

CONFIG_PATH: Final = ".resolver/config.yml"
IGNORED_NOT_OPTED_IN: Final = "not opted in"
IGNORED_NO_BOT_PULL: Final = "no bot pull request into the base"
IGNORED_BEING_READ: Final = "options being read"


@dataclass(frozen=True)
class PullChange:
    """One of the bot's pull requests as an event left it: open from `head` into `base`, or not
    open any more (closed or merged)."""

    repo: str
    number: int
    head: str
    base: str
    open: bool


PullTracker: TypeAlias = "Callable[[WebhookEvent, Policy], PullChange | None]"
"""Reads a pull request event: the change to one of the bot's pull requests, or None when the
pull request is not the bot's."""
PullTrackers: TypeAlias = "Mapping[str, PullTracker]"


@dataclass(frozen=True)
class Standing:
    """What intake knows of a repository: its options as last read (None: not read yet), and
    whether one of the bot's pull requests is open into the base asked about."""

    ci_fix: bool | None
    conflicts_fix: bool | None
    ci_reading: bool
    """A job that reads `ci` was let through a moment ago: later red checks wait for it."""
    conflicts_reading: bool
    pull_into_base: bool


def why_push_ignored(standing: Standing | None) -> str | None:
    """Why a push to the default branch cannot concern the bot (`conflicts: fix`), or None when
    it may (a job decides): not opted in, or no pull request of the bot's into that base."""
    if standing is None or standing.conflicts_fix is None:
        return IGNORED_BEING_READ if standing is not None and standing.conflicts_reading else None
    if not standing.conflicts_fix:
        return IGNORED_NOT_OPTED_IN
    return None if standing.pull_into_base else IGNORED_NO_BOT_PULL


def why_check_ignored(standing: Standing | None) -> str | None:
    """Why a red check on the bot's branch cannot concern it (`ci: fix` off), or None."""
    if standing is None or standing.ci_fix is None:
        return IGNORED_BEING_READ if standing is not None and standing.ci_reading else None
    return None if standing.ci_fix else IGNORED_NOT_OPTED_IN


def touches_config(changed: Iterable[Iterable[str]] | None, complete: bool) -> bool | None:
    """Whether a push whose commits changed these paths (added, modified or removed, one
    iterable per commit) changed `.resolver/config.yml`; None when the forge's list of its
    commits is missing or cut short (`complete` false)."""
    if changed is None or not complete:
        return None
    return any(CONFIG_PATH in paths for paths in (set(commit) for commit in changed))
