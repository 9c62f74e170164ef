"""What the agent is asked to do, within which limits, and how it ended. Plain values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from resolver.contract.outbound import Comment, ReviewThread
from resolver.core.budgets import Cap

if TYPE_CHECKING:
    from resolver.core.settings import Settings

FinishOutcome = Literal["changed_code", "answered", "could_not", "stopped"]
FINISH_OUTCOMES: Final = ("changed_code", "answered", "could_not")


@dataclass(frozen=True)
class TaskContext:
    """Where the request came from. Every text in it was written by users: untrusted."""

    kind: str  # "github_issue", "github_pr", "slack_thread", "jira_issue", … (free text)
    title: str | None = None
    body: str | None = None
    url: str | None = None
    comments: tuple[Comment, ...] = ()
    review_threads: tuple[ReviewThread, ...] = ()


@dataclass(frozen=True)
class InstructionFile:
    """One of the repository's instruction files (`AGENTS.md`, …), from the default branch."""

    path: str
    text: str
    cut: bool = False
    """Longer than its share of the caps: the rest was left out."""


@dataclass(frozen=True)
class AgentLimits:
    """When the loop stops on its own. Cost applies when known, tokens when it is not."""

    max_iterations: int
    max_cost_usd: float
    max_tokens: int
    wall_clock_seconds: float


@dataclass(frozen=True)
class AgentTask:
    """Everything `run_agent` needs, built by the caller (the worker or the CLI)."""

    job_id: int
    instruction: str
    context: TaskContext | None
    repo_instructions: tuple[InstructionFile, ...]
    limits: AgentLimits
    secrets: tuple[str, ...] = ()
    requester: str | None = None
    caps: tuple[Cap, ...] = ()
    """The shared budgets this job counts against; checked before every step."""
    review: bool = False
    """A review: the agent comments on the diff and finishes with a verdict (`review_tools`)."""


@dataclass(frozen=True)
class AgentResult:
    """How the loop ended. `stopped` means a limit, stuck detection or a cancel ended it."""

    outcome: FinishOutcome
    summary: str
    stop_reason: str | None
    steps: int
    cost_usd: float | None
    prompt_tokens: int
    completion_tokens: int
    thread_replies: Mapping[str, str] = field(default_factory=dict)
    """What the model said it did about each review thread, by the thread's id."""


class InvalidLimitError(ValueError):
    """A per-repository limit in .resolver/config.yml is not a positive number."""


# Repository config key -> (AgentLimits field, type).
REPO_LIMIT_KEYS: Final[Mapping[str, tuple[str, type]]] = {
    "max_iterations": ("max_iterations", int),
    "max_cost_usd": ("max_cost_usd", float),
    "max_tokens": ("max_tokens", int),
    "wall_clock_seconds": ("wall_clock_seconds", float),
}


def limits_from(settings: Settings, repo_config: Mapping[str, Any] | None = None) -> AgentLimits:
    """The operator's limits, lowered by the repository's `.resolver/config.yml`.

    A repository may tighten a limit but never raise it above the operator's setting: the
    config file is written by whoever can push to the default branch, not by whoever pays.
    """
    ceiling = AgentLimits(
        max_iterations=settings.llm_max_iterations,
        max_cost_usd=settings.llm_max_cost_usd,
        max_tokens=settings.llm_max_tokens,
        wall_clock_seconds=float(settings.llm_wall_clock_seconds),
    )
    values = {name: getattr(ceiling, name) for name, _ in REPO_LIMIT_KEYS.values()}
    for key, (name, kind) in REPO_LIMIT_KEYS.items():
        if repo_config and repo_config.get(key) is not None:
            values[name] = min(values[name], _positive(key, repo_config[key], kind))
    return AgentLimits(**values)


def _positive(key: str, value: object, kind: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = type(value).__name__  # not the value: a repository's, of any size
        raise InvalidLimitError(f"{key} in .resolver/config.yml must be a number, not a {shown}")
    if not math.isfinite(value) or value <= 0 or (kind is int and value != int(value)):
        raise InvalidLimitError(f"{key} in .resolver/config.yml must be a positive {kind.__name__}")
    return kind(value)  # type: ignore[no-any-return]
