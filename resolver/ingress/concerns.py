"""Whether a default-branch push or a red check can concern the bot, decided at intake without
a forge call: the repository's options (`conflicts: fix`, `ci: fix`) as a job last read them,
and the bot's open pull requests into the pushed base (`store.bot_pulls`). One indexed read;
a write only when the options are not known yet (the event then runs the one job that reads
them, and others wait for it) or a push changed them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from resolver.contract.inbound import Trigger
from resolver.contract.pulls import Standing, why_check_ignored, why_push_ignored
from resolver.contract.triggers import BasePushed
from resolver.store import bot_pulls
from resolver.store.db import get_engine
from resolver.store.models import utcnow


def needs_standing(trigger: Trigger) -> bool:
    """Whether the trigger is one that the records decide on."""
    return trigger.bot_branches or trigger.ci_branch is not None


def in_process_store() -> bool:
    """Whether the database is a file this process reads itself (SQLite), not a server."""
    return get_engine().dialect.name == "sqlite"


@dataclass(frozen=True)
class Decision:
    """Why a trigger cannot concern the bot (answered 204, no row), or None to record it; and the
    write that must be made first, if any (its options not known yet, or a push changed them)."""

    why: str | None
    note: Callable[[], None] | None = None


def why_not_ours(provider: str, trigger: Trigger) -> str | None:
    """Why the trigger cannot concern the bot (answered 204, no row), or None to record it."""
    decision = decide(provider, trigger)
    if decision.note is not None:
        decision.note()
    return decision.why


def decide(provider: str, trigger: Trigger) -> Decision:
    """`why_not_ours` with its write left to the caller: the read alone, then what to write."""
    repo, now = trigger.repo or "", utcnow()
    subject = trigger.subject
    if trigger.bot_branches and isinstance(subject, BasePushed):
        if subject.push.config_touched is not False:
            return Decision(None, partial(_refresh, provider, repo))
        return _decide(provider, repo, subject.push.branch, now, push=True)
    return _decide(provider, repo, None, now, push=False)


def _decide(provider: str, repo: str, base: str | None, now: datetime, *, push: bool) -> Decision:
    with get_engine().connect() as conn:
        standing = bot_pulls.standing(conn, provider, repo, base, now)
    why = why_push_ignored(standing) if push else why_check_ignored(standing)
    if why is None and _unknown(standing, push):
        return Decision(None, partial(_asked, provider, repo, "conflicts" if push else "ci"))
    return Decision(why)


def _asked(provider: str, repo: str, feature: bot_pulls.Feature) -> None:
    with get_engine().begin() as conn:
        bot_pulls.asked(conn, provider, repo, feature)


def _unknown(standing: Standing | None, push: bool) -> bool:
    if standing is None:
        return True
    return (standing.conflicts_fix if push else standing.ci_fix) is None


def _refresh(provider: str, repo: str) -> None:
    """A push that changed (or may have changed) `.resolver/config.yml`: what was read before
    no longer holds; this push's job reads the options again."""
    with get_engine().begin() as conn:
        bot_pulls.forget_options(conn, provider, repo)
        bot_pulls.asked(conn, provider, repo, "conflicts")
