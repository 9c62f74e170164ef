"""How the worker records an agent's run: the job's state, its outcome and the result JSON
(summary, notes, egress, checks, the branch's files)."""

from __future__ import annotations

from typing import Any, Final

from resolver.agent.task import AgentResult
from resolver.contract.triggers import JsonObject
from resolver.contract.verification import Verification
from resolver.core.budgets import BUDGET
from resolver.core.job import RunResult
from resolver.core.states import JobState, Outcome

# The files a pull request's description lists (the forge shows them all).
MAX_FILES_LISTED: Final = 50


def run_result(
    agent: AgentResult,
    diff: str,
    notes: tuple[str, ...] = (),
    egress: dict[str, Any] | None = None,
    verification: Verification | None = None,
    files: tuple[tuple[str, int | None, int | None], ...] = (),
) -> RunResult:
    """How the worker records the job: state, outcome and the result JSON."""
    details: JsonObject = {
        "summary": agent.summary,
        "agent_outcome": agent.outcome,
        "stop_reason": agent.stop_reason,
        "steps": agent.steps,
        "changed": bool(diff.strip()),
    }
    if notes:
        details["notes"] = list(notes)
    if egress is not None:
        details["egress"] = egress
    if verification is not None and agent.steps:
        details["verification"] = verification.as_dict()
    if files:
        details["files"] = [list(entry) for entry in files[:MAX_FILES_LISTED]]
        details["files_total"] = len(files)
    if agent.thread_replies:
        details["thread_replies"] = dict(agent.thread_replies)
    if agent.outcome == "changed_code":
        outcome = Outcome.CHANGED_CODE if diff.strip() else Outcome.NO_CHANGES
        return RunResult(JobState.SUCCEEDED, outcome, result=details)
    if agent.outcome == "answered":
        return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result=details)
    if agent.outcome == "could_not":
        return RunResult(JobState.FAILED, Outcome.COULD_NOT, error=agent.summary, result=details)
    if agent.stop_reason == "cancelled":
        return RunResult(JobState.CANCELLED, Outcome.CANCELLED, result=details)
    if agent.stop_reason == BUDGET:
        return RunResult(JobState.FAILED, Outcome.REFUSED, error=agent.summary, result=details)
    return RunResult(JobState.FAILED, Outcome.ERROR, error=agent.summary, result=details)
