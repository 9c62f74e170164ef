"""The values a request's steps share (worker/request.py, and the scheduled runs' runner):
the job as read once, the plan for its repository and branch, Stop, and how a run that could
not go on ends."""

from __future__ import annotations

from dataclasses import dataclass, field

from resolver.agent.git import RepoError
from resolver.agent.mcp_config import McpConfigError
from resolver.agent.task import InvalidLimitError
from resolver.contract import outbound as providers
from resolver.contract.outbound import Comment
from resolver.contract.triggers import TaskTrigger
from resolver.core.job import AttemptLostError, RunResult
from resolver.core.model_choice import ModelNotAllowedError
from resolver.core.states import JobState, Outcome
from sandbox import (
    ChangeRejectedError,
    EgressConfigError,
    RepoSetupError,
    SandboxError,
    SandboxLostError,
)


class Stop(Exception):
    """The job ends before the agent runs: a refusal, a missing repository, a forge error."""

    def __init__(self, outcome: Outcome, message: str, state: JobState = JobState.FAILED) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.state = state


# What stops a run before its agent is done: caught by each runner, ended by `ended_by`.
ENDING_ERRORS = (
    Stop,
    ModelNotAllowedError,
    McpConfigError,
    SandboxError,
    RepoError,
    RepoSetupError,
    EgressConfigError,
    ChangeRejectedError,
    InvalidLimitError,
)


def ended_by(error: Exception) -> RunResult:
    """The result of a run that one of ENDING_ERRORS stopped. A sandbox lost to the
    infrastructure gives none: AttemptLostError, and the worker runs the job again."""
    if isinstance(error, SandboxLostError):
        raise AttemptLostError(str(error)) from error
    if isinstance(error, Stop):
        return RunResult(error.state, error.outcome, error=str(error))
    if isinstance(error, ModelNotAllowedError | McpConfigError):
        return RunResult(JobState.FAILED, Outcome.REFUSED, error=str(error))
    if isinstance(error, SandboxError):
        reason = f"the sandbox failed ({error}); an operator can run `resolver doctor`"
        return RunResult(JobState.FAILED, Outcome.ERROR, error=reason)
    if isinstance(error, ChangeRejectedError):
        reason = f"I did not push the agent's change: {error}."
        return RunResult(JobState.FAILED, Outcome.ERROR, error=reason)
    return RunResult(JobState.FAILED, Outcome.ERROR, error=str(error))


@dataclass(frozen=True)
class Earlier:
    """The previous job of the same conversation (a follow-up continues it)."""

    id: int
    task: str
    summary: str
    branch: str | None
    pr_url: str | None


@dataclass(frozen=True)
class Snapshot:
    """The job as the runner needs it, read once."""

    id: int
    source: str
    task: str
    repo: str | None
    requester: str | None
    requester_id: int | None
    trigger: TaskTrigger
    branch: str | None
    earlier: Earlier | None


@dataclass(frozen=True)
class Plan:
    """Where the job works: the forge and repository, the base it starts from, the branch it
    pushes."""

    forge_name: str
    repo: providers.RepoInfo
    base: str
    branch: str
    checkout: str | None = None
    update: bool = False
    """Push to an open pull request's branch (fast-forward only; no new pull request)."""
    pr_url: str | None = None
    fixes: int | None = None
    context: list[Comment] = field(default_factory=list)
    fetch_from: str | None = None
    """Where `checkout` (a ref, a fork's head) is fetched from, when not the repository."""
    fetch_commit: str | None = None
    """The commit `checkout` reaches that is the head, when not its own (`PullInfo`'s)."""


def text_of(value: object) -> str | None:
    """A trigger's field as text: a non-empty string, else None."""
    return value if isinstance(value, str) and value else None
