"""The worker's runner for forge jobs: clone, agent in the sandbox, commit and push a branch.

Posting the pull request and status comments back to the forge is the callback side; this
module ends at the pushed branch, recorded on the job.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from resolver import jobs
from resolver.agent import repo as git_repo
from resolver.agent.session import AfterAgent, SessionRequest, run_result, run_session
from resolver.agent.task import AgentResult, TriggerContext
from resolver.branches import build_branch_name, build_commit_message
from resolver.config import get_settings
from resolver.db import session_scope
from resolver.logs import log
from resolver.runners import JobContext, RunResult, register
from resolver.states import JobState, Outcome
from sandbox import RepoSetupError, SandboxError

logger = logging.getLogger(__name__)


def _request(job_id: int) -> tuple[SessionRequest, dict[str, Any]]:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        trigger = dict(job.trigger)
        source = trigger.get("clone_url") or job.repo or ""
        context = TriggerContext(
            kind=f"{job.source}_{'pull_request' if trigger.get('is_pull_request') else 'issue'}",
            title=trigger.get("title"),
            body=trigger.get("body"),
            url=trigger.get("html_url"),
        )
        request = SessionRequest(
            job_id=job.id,
            repo=source,
            instruction=job.task,
            context=context,
            requester=job.requester,
        )
    return request, trigger


def _push(job_id: int, trigger: dict[str, Any], requester: str | None) -> AfterAgent:
    """The after-agent hook: commit what the agent changed and push the job's branch."""
    bot = get_settings().bot_name

    def after(workspace: Path, agent: AgentResult) -> None:
        if agent.outcome != "changed_code" or not git_repo.working_diff(workspace).strip():
            return
        branch = build_branch_name(trigger.get("number"), trigger.get("title"), job_id)
        message = build_commit_message(
            trigger.get("title") or "", agent.summary, requester, trigger.get("requester_email")
        )
        identity = ["-c", f"user.name={bot}", "-c", f"user.email={bot}@users.noreply"]
        git_repo.git(workspace, "checkout", "-q", "-B", branch)
        git_repo.git(workspace, "add", "-A")
        git_repo.git(workspace, *identity, "commit", "-q", "-m", message)
        git_repo.git(workspace, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        with session_scope() as session:
            jobs.get_job(session, job_id).branch = branch
        log(logger, logging.INFO, "job.branch_pushed", job=job_id, branch=branch)

    return after


def run_forge_job(ctx: JobContext) -> RunResult:
    """Run the agent on the job's repository; push a branch when it changed code."""
    request, trigger = _request(ctx.job_id)
    if not request.repo:
        return RunResult(JobState.FAILED, Outcome.ERROR, error="the job names no repository")
    try:
        done = run_session(request, ctx, after=_push(ctx.job_id, trigger, request.requester))
    except SandboxError as error:
        reason = f"the sandbox could not start ({error}); an operator can run `resolver doctor`"
        return RunResult(JobState.FAILED, Outcome.ERROR, error=reason)
    except (git_repo.RepoError, RepoSetupError) as error:
        return RunResult(JobState.FAILED, Outcome.ERROR, error=str(error))
    return run_result(done.agent, done.diff)


for _source in ("github", "gitlab"):
    register(_source, run_forge_job)
