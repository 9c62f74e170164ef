"""Clone → sandbox → setup → agent → change: the one code path of the worker and `resolver run`.

The host's clone is private and has no work tree. The sandbox gets a copy of its `.git` and
checks it out inside; when the agent is done, its container is stopped and its change comes out
as checked data, which is written onto the clone as a tree (repo.apply_change). The after-agent
hook (the worker's push) sees only that tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from resolver.agent import git as git_repo
from resolver.agent.budget import reserve_start
from resolver.agent.controller import job_secrets, run_agent
from resolver.agent.egress import JobEgress, blocked_notes, egress_record, job_egress
from resolver.agent.events import Kind
from resolver.agent.llm import LLMConfig, llm_config_from
from resolver.agent.mcp_config import servers_from
from resolver.agent.mcp_job import credentials_for, job_mcp, repository_of
from resolver.agent.request import SessionRequest, build_task, chosen_model
from resolver.agent.sandboxes import policy_from_settings
from resolver.agent.task import AgentResult, AgentTask
from resolver.agent.trajectory import latest_attempt
from resolver.agent.verify import build_verification, configured_commands
from resolver.agent.workspace import change_notes, egress_plan, started, take_change
from resolver.contract.verification import Verification
from resolver.core.budgets import BUDGET
from resolver.core.job import JobContext
from resolver.core.logs import register_secret
from resolver.core.redact import Redactor
from resolver.core.settings import Settings
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Job
from sandbox import RepoSetup, Sandbox, run_setup, setup_failure

SETUP_FAILED: Final = "setup_failed"
SETUP_OUTPUT_CHARS: Final = 2000


# The change kept in the trajectory for people to read; the branch has all of it.
DIFF_SHOWN_CHARS: Final = 200_000


@dataclass(frozen=True)
class Work:
    """The agent's change, written onto the job's private clone."""

    clone: git_repo.Clone
    base: str
    tree: str | None
    """The new tree; None when the agent changed nothing."""


@dataclass(frozen=True)
class SessionResult:
    agent: AgentResult
    diff: str
    notes: tuple[str, ...] = ()
    """What the host did with the agent's work that its requester should know."""
    egress: dict[str, Any] | None = None
    """Each host the sandbox's proxy saw, with counts; None when the job had no network."""
    verification: Verification | None = None
    """The checks the trajectory shows (None when the agent never ran)."""
    files: tuple[tuple[str, int | None, int | None], ...] = ()
    """The whole branch's change against its base: path, lines added, lines removed."""


# Called with the work and the agent's result while the clone still exists: the worker
# commits and pushes here.
AfterAgent = Callable[[Work, AgentResult], None]


def run_session(
    request: SessionRequest,
    ctx: JobContext,
    *,
    llm: LLMConfig | None = None,
    after: AfterAgent | None = None,
) -> SessionResult:
    """Clone the repo on the host, run its setup and the agent in a sandbox, take the change.

    The sandbox, its workspace and the clone are removed before this returns.
    """
    settings = ctx.settings
    config = llm or llm_config_from(settings)
    for secret in request.secrets:
        # A clone URL may carry a token, and git errors quote the URL. Each job's is new: one
        # among the most recent, not masked for good.
        register_secret(secret, passing=True)
    root = settings.sandbox_workspace_root
    with git_repo.private_clone(request.repo, root, request.branch, request.git_env) as clone:
        return _in_sandbox(request, ctx, settings, config, clone, after)


def _in_sandbox(
    request: SessionRequest,
    ctx: JobContext,
    settings: Settings,
    config: LLMConfig,
    clone: git_repo.Clone,
    after: AfterAgent | None,
) -> SessionResult:
    base, ref = git_repo.head(clone), git_repo.default_ref(clone)
    repo_config = git_repo.repo_config(clone, ref)
    servers = servers_from(settings, repo_config)  # a bad `mcp:` entry refuses the job here
    config = chosen_model(config, settings, request.model, repo_config)
    _record_model(request.job_id, config.model)
    task = build_task(request, settings, clone, ref, repo_config)
    with session_scope() as session:
        repo = repository_of(session, task.job_id, request.repo)
        credentials = credentials_for(session, repo, servers, settings)
    task = replace(task, secrets=task.secrets + tuple(c.value for c in credentials.values()))
    with session_scope() as session:
        task, refused = reserve_start(session, task, settings, repo_config)
    if refused is not None:
        return SessionResult(_not_started(task, settings, config, refused), "")
    setup = git_repo.read_setup(clone, ref)
    policy = policy_from_settings(settings)
    network = setup.network if setup else None
    egress = job_egress(settings, repo_config, network)
    plan = egress_plan(egress, setup is not None)
    with started(str(request.job_id), policy, ctx, plan, clone, settings) as sandbox:
        failure = _run_setup(task, sandbox, ctx, settings, config, setup)
        if plan is not None and setup is not None and egress.agent != egress.setup:
            sandbox.allow(egress.agent)
        _record_instructions(task, settings, config)
        if failure and not ctx.cancelled.is_set():
            agent = _setup_failed(task, settings, config, failure)
        else:
            with job_mcp(servers, sandbox, credentials, settings) as mcp:
                if mcp is not None:
                    _record(task, settings, config, Kind.MCP, {"servers": mcp.record})
                with session_scope() as session:  # a cancelled job stops at once
                    agent = run_agent(session, task, sandbox, ctx, config, mcp)
        change, unread = take_change(sandbox, clone, base, agent, settings, ctx)
    record = _record_egress(task, settings, config, egress, sandbox) if plan else None
    with session_scope() as session:
        events = latest_attempt(session, task.job_id)
    verification = build_verification(events, configured_commands(repo_config))
    _record(task, settings, config, Kind.VERIFICATION, verification.as_dict())
    tree = git_repo.apply_change(clone, base, change)
    if after is not None:
        after(Work(clone, base, tree), agent)
    notes = egress.refused + change_notes(change) + ((unread,) if unread else ())
    notes += blocked_notes(sandbox.egress_hosts)
    diff = git_repo.diff(clone, base, tree)
    if diff.strip():
        shown = {"diff": diff[:DIFF_SHOWN_CHARS], "truncated": len(diff) > DIFF_SHOWN_CHARS}
        _record(task, settings, config, Kind.DIFF, shown)
    files = branch_files(clone, request.pull_base, base, tree)
    return SessionResult(agent, diff, notes, record, verification, files)


def _record_model(job_id: int, model: str) -> None:
    with session_scope() as session:
        job = session.get(Job, job_id)
        if job is not None:
            job.model = model


def _record_egress(
    task: AgentTask, settings: Settings, config: LLMConfig, egress: JobEgress, sandbox: Sandbox
) -> dict[str, Any]:
    hosts = egress_record(sandbox.egress_hosts)
    payload = {
        "setup": egress.setup.describe(),
        "agent": egress.agent.describe(),
        "hosts": hosts,
        "refused": list(egress.refused),
    }
    _record(task, settings, config, Kind.EGRESS, payload)
    return hosts


def branch_files(
    clone: git_repo.Clone, pull_base: str | None, base: str, tree: str | None
) -> tuple[tuple[str, int | None, int | None], ...]:
    """The whole branch's change (its earlier commits and this job's tree) against where it
    leaves `pull_base`, as the pull request will show it."""
    target = f"origin/{pull_base}" if pull_base else git_repo.default_ref(clone)
    since = git_repo.merge_base(clone, target, base) or base
    return tuple(git_repo.diff_stat(clone, since, tree or base))


def _record_instructions(task: AgentTask, settings: Settings, config: LLMConfig) -> None:
    """Say in the trajectory (and so on the job's page) which instruction files were used."""
    files = [{"path": f.path, "chars": len(f.text), "cut": f.cut} for f in task.repo_instructions]
    _record(task, settings, config, Kind.INSTRUCTIONS, {"files": files})


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
        done = run_setup(sandbox, setup.script, settings.sandbox_setup_timeout)
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


def _setup_failed(
    task: AgentTask, settings: Settings, config: LLMConfig, failure: str
) -> AgentResult:
    """Record a failed setup loudly; the agent does not run on a half-prepared repository."""
    message = f"The repository's setup failed, so the agent did not start. {failure}"
    _record(task, settings, config, Kind.STOP, {"reason": SETUP_FAILED, "message": message})
    redacted = Redactor(job_secrets(task, settings, config))(message)
    return AgentResult("stopped", redacted, SETUP_FAILED, 0, None, 0, 0)


def _not_started(
    task: AgentTask, settings: Settings, config: LLMConfig, refusal: str
) -> AgentResult:
    """A shared budget has no room for this job: the sandbox never opens, nothing is spent."""
    _record(task, settings, config, Kind.STOP, {"reason": BUDGET, "message": refusal})
    return AgentResult("stopped", refusal, BUDGET, 0, None, 0, 0)


def _record(
    task: AgentTask, settings: Settings, config: LLMConfig, kind: str, payload: dict[str, Any]
) -> None:
    redactor = Redactor(job_secrets(task, settings, config))
    with session_scope() as session:
        jobs.append_event(session, task.job_id, kind, payload, redactor)


def run_in_clone(
    request: SessionRequest,
    ctx: JobContext,
    clone: git_repo.Clone,
    *,
    after: AfterAgent | None = None,
) -> SessionResult:
    """`run_session` on a clone the caller made and prepared: the agent starts from its HEAD
    (a merge with conflicts, for `@bot rebase`). The caller removes the clone."""
    settings = ctx.settings
    for secret in request.secrets:
        register_secret(secret, passing=True)
    return _in_sandbox(request, ctx, settings, llm_config_from(settings), clone, after)
