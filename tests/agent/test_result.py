"""How an agent's end becomes the job's state and outcome (what the worker records)."""

from __future__ import annotations

import pytest

from resolver.agent.result import run_result
from resolver.agent.task import AgentResult
from resolver.core.states import JobState, Outcome

DIFF = "diff --git a/x b/x\n+y\n"


def ended(outcome: str, stop_reason: str | None = None) -> AgentResult:
    return AgentResult(outcome, "summary", stop_reason, 3, 0.1, 10, 5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("agent", "diff", "state", "outcome"),
    [
        (ended("changed_code"), DIFF, JobState.SUCCEEDED, Outcome.CHANGED_CODE),
        (ended("changed_code"), "", JobState.SUCCEEDED, Outcome.NO_CHANGES),
        (ended("answered"), "", JobState.SUCCEEDED, Outcome.ANSWERED),
        (ended("could_not"), "", JobState.FAILED, Outcome.COULD_NOT),
        (ended("stopped", "cancelled"), DIFF, JobState.CANCELLED, Outcome.CANCELLED),
        (ended("stopped", "max_cost"), DIFF, JobState.FAILED, Outcome.ERROR),
    ],
)
def test_run_result(agent: AgentResult, diff: str, state: JobState, outcome: Outcome) -> None:
    result = run_result(agent, diff)
    assert (result.state, result.outcome) == (state, outcome)
    assert result.result["stop_reason"] == agent.stop_reason
    assert result.result["changed"] is bool(diff)
