"""What the agent is asked to run on (`SessionRequest`), and the task made of it: the model it
may use, the repository's instructions and the limits, lowered by the request's own."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from resolver.agent import git as git_repo
from resolver.agent.instructions import paths_named, read_instructions
from resolver.agent.llm import LLMConfig
from resolver.agent.task import AgentLimits, AgentTask, TaskContext, limits_from
from resolver.core.model_choice import allowed_models, choose_model
from resolver.core.settings import Settings


@dataclass(frozen=True)
class SessionRequest:
    """What to run the agent on. `branch` is checked out (a PR's head); default: the default."""

    job_id: int
    repo: str
    instruction: str
    context: TaskContext | None = None
    branch: str | None = None
    secrets: tuple[str, ...] = ()
    requester: str | None = None
    git_env: dict[str, str] | None = None
    """Auth for the host's clone and push; never enters the sandbox."""
    max_iterations: int | None = None
    max_cost_usd: float | None = None
    """Lower limits for this request (a schedule's); they never raise the configured ones."""
    pull_base: str | None = None
    """The branch the work is proposed into: the pull request's files are counted from where
    the work leaves it (default: the default branch)."""
    model: str | None = None
    """The model the request named (`model=NAME`); else the repository's, else the default."""
    review: bool = False
    """A review: the agent has `comment` and a `finish` with a verdict; nothing is pushed."""


# Paths whose nearest nested AGENTS.md is looked for (a branch may change many more).
MAX_INSTRUCTION_PATHS: Final = 50


def chosen_model(
    config: LLMConfig, settings: Settings, requested: str | None, repo_config: dict[str, Any]
) -> LLMConfig:
    """`config` with the request's or the repository's model; ModelNotAllowedError when that
    model is not on the operator's list. The configured prices are the default model's."""
    allowed = allowed_models(config.model, settings.llm_models)
    model = choose_model(requested, repo_config.get("model"), config.model, allowed)
    if model == config.model:
        return config
    return replace(config, model=model, input_cost_per_token=None, output_cost_per_token=None)


def build_task(
    request: SessionRequest,
    settings: Settings,
    clone: git_repo.Clone,
    ref: str,
    repo_config: dict[str, Any] | None = None,
) -> AgentTask:
    """The agent's task, with instructions and limits read from the default branch."""
    if repo_config is None:
        repo_config = git_repo.repo_config(clone, ref)
    return AgentTask(
        job_id=request.job_id,
        instruction=request.instruction,
        context=request.context,
        repo_instructions=read_instructions(clone, ref, instruction_paths(request, clone, ref)),
        limits=_lowered(limits_from(settings, repo_config), request),
        secrets=request.secrets,
        requester=request.requester,
        review=request.review,
    )


def instruction_paths(request: SessionRequest, clone: git_repo.Clone, ref: str) -> list[str]:
    """Where nested `AGENTS.md` files are looked for: the paths the request names, and the
    paths a follow-up's branch has changed."""
    context = request.context
    named = paths_named([request.instruction, *((context.title, context.body) if context else ())])
    since = git_repo.merge_base(clone, ref, "HEAD") if request.branch else None
    changed = git_repo.changed_paths(clone, since, "HEAD") if since else []
    return list(dict.fromkeys([*named, *changed]))[:MAX_INSTRUCTION_PATHS]


def _lowered(limits: AgentLimits, request: SessionRequest) -> AgentLimits:
    """The request's own limits, where they are lower than the operator's and repository's."""
    if request.max_iterations is not None:
        limits = replace(limits, max_iterations=min(limits.max_iterations, request.max_iterations))
    if request.max_cost_usd is not None:
        limits = replace(limits, max_cost_usd=min(limits.max_cost_usd, request.max_cost_usd))
    return limits
