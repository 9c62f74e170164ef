"""Clone → sandbox → setup → agent → diff: the one code path of the worker and `resolver run`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from resolver import jobs
from resolver.agent import repo as git_repo
from resolver.agent.controller import job_secrets, run_agent
from resolver.agent.events import Kind
from resolver.agent.llm import LLMConfig, llm_config_from
from resolver.agent.task import AgentLimits, AgentResult, AgentTask, TriggerContext, limits_from
from resolver.config import Settings, get_settings
from resolver.db import session_scope
from resolver.logs import register_secret
from resolver.redact import Redactor
from resolver.runners import JobContext, RunResult
from resolver.states import JobState, Outcome
from sandbox import (
    RepoSetup,
    Sandbox,
    open_sandbox,
    policy_from_settings,
    prepare_workspace,
    read_repo_setup,
    run_setup,
    setup_failure,
)

SETUP_FAILED: Final = "setup_failed"
SETUP_OUTPUT_CHARS: Final = 2000


@dataclass(frozen=True)
class SessionRequest:
    """What to run the agent on. `branch` is checked out (a PR's head); default: the default."""

    job_id: int
    repo: str
    instruction: str
    context: TriggerContext | None = None
    branch: str | None = None
    secrets: tuple[str, ...] = ()
    requester: str | None = None
    git_env: dict[str, str] | None = None
    """Auth for host-side git (clone, push); never enters the sandbox."""
    max_iterations: int | None = None
    max_cost_usd: float | None = None
    """Lower limits for this request (a schedule's); they never raise the configured ones."""


@dataclass(frozen=True)
class SessionResult:
    agent: AgentResult
    diff: str
    workspace: Path


# Called with the workspace and the agent's result while the workspace still exists: the
# worker commits and pushes here.
AfterAgent = Callable[[Path, AgentResult], None]


def run_session(
    request: SessionRequest,
    ctx: JobContext,
    *,
    llm: LLMConfig | None = None,
    after: AfterAgent | None = None,
) -> SessionResult:
    """Clone the repo on the host, run its setup and the agent in a sandbox, return the diff.

    The sandbox's container and workspace are removed before this returns.
    """
    settings = get_settings()
    config = llm or llm_config_from(settings)
    for secret in request.secrets:
        # A clone URL may carry a token, and git errors quote the URL.
        register_secret(secret)
    root = settings.sandbox_workspace_root
    # Only the engine (root) needs to reach workspaces, as for the sandbox's own ones.
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    workspace = (root / f"job-{request.job_id}").resolve()
    try:
        git_repo.clone(request.repo, workspace, request.branch, request.git_env)
        return _in_sandbox(request, ctx, settings, config, workspace, after)
    finally:
        git_repo.remove(workspace)


def _in_sandbox(
    request: SessionRequest,
    ctx: JobContext,
    settings: Settings,
    config: LLMConfig,
    workspace: Path,
    after: AfterAgent | None,
) -> SessionResult:
    ref = git_repo.default_ref(workspace)
    task = build_task(request, settings, workspace, ref)
    setup = read_repo_setup(workspace, ref)
    prepare_workspace(workspace)
    with open_sandbox(str(request.job_id), policy_from_settings(settings), workspace) as sandbox:
        failure = _run_setup(task, sandbox, ctx, settings, config, setup)
        if failure and not ctx.cancelled.is_set():
            agent = _setup_failed(task, settings, config, failure)
        else:
            agent = run_agent(task, sandbox, ctx, config)  # a cancelled job stops at once
        diff = git_repo.working_diff(workspace)
        if after is not None:
            after(workspace, agent)
    return SessionResult(agent, diff, workspace)


def _run_setup(
    task: AgentTask,
    sandbox: Sandbox,
    ctx: JobContext,
    settings: Settings,
    config: LLMConfig,
    setup: RepoSetup | None,
) -> str | None:
    """Run `.resolver/setup.sh` (cancellable), record it, and return its failure, if any."""
    if setup is None:
        return None
    ctx.on_cancel.append(sandbox.interrupt)
    try:
        done = run_setup(sandbox, setup.script, setup.network, settings.sandbox_setup_timeout)
    finally:
        ctx.on_cancel.remove(sandbox.interrupt)
    payload = {
        "exit_code": done.exit_code,
        "duration": round(done.duration, 3),
        "network": setup.network,
        "output": done.output[-SETUP_OUTPUT_CHARS:],
    }
    _record(task, settings, config, Kind.SETUP, payload)
    return setup_failure(done)


def build_task(request: SessionRequest, settings: Settings, workspace: Path, ref: str) -> AgentTask:
    """The agent's task, with instructions and limits read from the default branch."""
    return AgentTask(
        job_id=request.job_id,
        instruction=request.instruction,
        context=request.context,
        repo_instructions=git_repo.repo_instructions(workspace, ref),
        limits=_lowered(limits_from(settings, git_repo.repo_config(workspace, ref)), request),
        secrets=request.secrets,
        requester=request.requester,
    )


def _lowered(limits: AgentLimits, request: SessionRequest) -> AgentLimits:
    """The request's own limits, where they are lower than the operator's and repository's."""
    if request.max_iterations is not None:
        limits = replace(limits, max_iterations=min(limits.max_iterations, request.max_iterations))
    if request.max_cost_usd is not None:
        limits = replace(limits, max_cost_usd=min(limits.max_cost_usd, request.max_cost_usd))
    return limits


def _setup_failed(
    task: AgentTask, settings: Settings, config: LLMConfig, failure: str
) -> AgentResult:
    """Record a failed setup loudly; the agent does not run on a half-prepared repository."""
    message = f"The repository's setup failed, so the agent did not start. {failure}"
    _record(task, settings, config, Kind.STOP, {"reason": SETUP_FAILED, "message": message})
    redacted = Redactor(job_secrets(task, settings, config))(message)
    return AgentResult("stopped", redacted, SETUP_FAILED, 0, None, 0, 0)


def _record(
    task: AgentTask, settings: Settings, config: LLMConfig, kind: str, payload: dict[str, Any]
) -> None:
    redactor = Redactor(job_secrets(task, settings, config))
    with session_scope() as session:
        jobs.append_event(session, task.job_id, kind, payload, redactor)


def run_result(agent: AgentResult, diff: str) -> RunResult:
    """How the worker records the job: state, outcome and the result JSON."""
    details: dict[str, Any] = {
        "summary": agent.summary,
        "agent_outcome": agent.outcome,
        "stop_reason": agent.stop_reason,
        "steps": agent.steps,
        "changed": bool(diff.strip()),
    }
    if agent.outcome == "changed_code":
        outcome = Outcome.CHANGED_CODE if diff.strip() else Outcome.NO_CHANGES
        return RunResult(JobState.SUCCEEDED, outcome, result=details)
    if agent.outcome == "answered":
        return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result=details)
    if agent.outcome == "could_not":
        return RunResult(JobState.FAILED, Outcome.COULD_NOT, error=agent.summary, result=details)
    if agent.stop_reason == "cancelled":
        return RunResult(JobState.CANCELLED, Outcome.CANCELLED, result=details)
    return RunResult(JobState.FAILED, Outcome.ERROR, error=agent.summary, result=details)
