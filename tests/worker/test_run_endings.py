"""How a run ends when something stops it before its agent is done: the same words for a
request and for a scheduled run (resolver.worker.values.ended_by)."""

from __future__ import annotations

import pytest

from resolver.agent.git import RepoError
from resolver.core.job import AttemptLostError, RunResult
from resolver.core.states import JobState, Outcome
from resolver.worker.values import ENDING_ERRORS, Stop, ended_by
from sandbox import RepoSetupError, SandboxError, SandboxLostError


def test_a_stop_keeps_its_state_outcome_and_words() -> None:
    stop = Stop(Outcome.REFUSED, "you cannot push to octo/widgets", JobState.FAILED)
    assert ended_by(stop) == RunResult(
        JobState.FAILED, Outcome.REFUSED, error="you cannot push to octo/widgets"
    )


def test_a_sandbox_that_cannot_start_points_the_operator_at_doctor() -> None:
    ended = ended_by(SandboxError("the Docker engine is not running"))
    assert (ended.state, ended.outcome) == (JobState.FAILED, Outcome.ERROR)
    assert ended.error == (
        "the sandbox failed (the Docker engine is not running); "
        "an operator can run `resolver doctor`"
    )


def test_a_sandbox_lost_to_the_infrastructure_ends_the_attempt_not_the_job() -> None:
    """The worker runs the job again (resolver.worker.execute), as after its own death."""
    lost = SandboxLostError("the sandbox stopped: its container is gone")
    assert isinstance(lost, ENDING_ERRORS)
    with pytest.raises(AttemptLostError, match="its container is gone"):
        ended_by(lost)


def test_repository_errors_are_reported_as_they_are() -> None:
    for error in (RepoError("clone failed: not found"), RepoSetupError("setup exited 1")):
        assert isinstance(error, ENDING_ERRORS)
        assert ended_by(error) == RunResult(JobState.FAILED, Outcome.ERROR, error=str(error))
