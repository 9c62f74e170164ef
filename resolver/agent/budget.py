"""The shared budgets at the agent's edge: the reservation before the agent starts, and the
check before each of its steps. The sums come from the store, never from memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from resolver.agent.task import AgentLimits, AgentTask
from resolver.core.budgets import BUDGET, Cap, InvalidBudgetError, Spent, caps_from
from resolver.core.settings import Settings
from resolver.store import budgets
from resolver.store.db import end_step
from resolver.store.models import utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def reserve_start(
    session: Session, task: AgentTask, settings: Settings, repo_config: Mapping[str, Any] | None
) -> tuple[AgentTask, str | None]:
    """The task with its caps, and why it may not start (None: its reservation is held)."""
    try:
        caps = caps_from(settings, repo_config)
    except InvalidBudgetError as error:
        return task, str(error)
    if not caps:
        return task, None
    task = replace(task, caps=caps, limits=within(task.limits, caps))
    estimate = Spent(task.limits.max_cost_usd, task.limits.max_tokens)
    refusal = budgets.reserve(session, task.job_id, caps, estimate, utcnow())
    return task, None if refusal is None else refusal.message()


def within(limits: AgentLimits, caps: tuple[Cap, ...]) -> AgentLimits:
    """Per-job limits no larger than any whole cap: no job could spend more than that, so it
    need not reserve more (a repository's `daily_usd: 1` still lets a job start)."""
    usd = [cap.limit for cap in caps if cap.unit == "usd"]
    tokens = [int(cap.limit) for cap in caps if cap.unit == "tokens"]
    return replace(
        limits,
        max_cost_usd=min([limits.max_cost_usd, *usd]),
        max_tokens=min([limits.max_tokens, *tokens]),
    )


def running_stop(
    session: Session, job_id: int, caps: tuple[Cap, ...], push_unfinished: bool
) -> str | None:
    """`budget: <message>` once what was spent reaches a cap, else None (read in the loop's
    session, its step ended before the next call to the model)."""
    if not caps:
        return None
    refusal = budgets.crossed_while_running(session, job_id, caps, utcnow())
    end_step(session)
    if refusal is None:
        return None
    pushed = (
        "Its unfinished work, if any, is pushed to its branch."
        if push_unfinished
        else "Nothing unfinished was pushed."
    )
    return f"{BUDGET}: {refusal.message(running=True)} {pushed}"
