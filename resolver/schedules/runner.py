"""The worker's runner for scheduled runs: jobs whose source is "schedule".

1. Look, on a scratch clone: the inputs' digest (the schedule's task, prompt and limits, the
   default branch's dependency manifests); whether the schedule's pull request is still open
   (the forge), whether someone else pushed to it, and whether a closed one was merged (git).
2. Decide (decide.py): update the open pull request's branch, propose afresh, or skip.
3. fix-default-branch runs the test command in a sandbox first; it acts only if it fails.
4. Work with the pipeline's own steps: the plan is recorded (the pull request is then opened
   by the callbacks), the branch is locked, the agent runs in the sandbox, the bot commits and
   pushes. A dry run pushes nothing and records the diff it would have proposed.

Nothing is posted when nothing changed: a run has no conversation of its own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from sqlalchemy.orm import Session

from integrations import registry
from integrations.registry import parse_repo_spec
from resolver.agent import git as git_repo
from resolver.agent.git import Clone
from resolver.agent.request import SessionRequest
from resolver.agent.result import run_result
from resolver.agent.session import AfterAgent, run_session
from resolver.agent.task import TaskContext
from resolver.broker.publish import publish_callback
from resolver.contract import outbound as providers
from resolver.contract import triggers
from resolver.contract.errors import CallbackError
from resolver.contract.triggers import JsonObject, TaskTrigger, read_trigger
from resolver.core.job import JobContext, RunResult
from resolver.core.logs import log
from resolver.core.redact import Redactor
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.schedules import look, pulls
from resolver.schedules.decide import OPEN, Action, Decision, Finding, Remembered, decide
from resolver.schedules.prompts import Inputs, build_instruction, failure_context
from resolver.schedules.queue import SOURCE
from resolver.schedules.spec import FIX_DEFAULT_BRANCH
from resolver.schedules.store import in_transaction
from resolver.store import jobs
from resolver.store.models import Schedule
from resolver.store.notices import record_notice
from resolver.worker.branches import BRANCH_PREFIX, slugify
from resolver.worker.push import branch_lock, push, take_back_push
from resolver.worker.request import record_plan
from resolver.worker.values import ENDING_ERRORS, Plan, Snapshot, ended_by

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

MAX_DIFF: Final = 50_000
TESTS_PASS: Final = "tests_pass"
DRY_RUN: Final = "dry_run"
NO_CO_AUTHOR: Final = ("", "")


@dataclass(frozen=True)
class ScheduledRun:
    """The job and its schedule, as the runner needs them, read once."""

    job_id: int
    trigger: TaskTrigger
    requester_id: int | None
    branch: str | None
    title: str
    schedule_id: int
    name: str
    task: str
    prompt: str | None
    test_command: str | None
    dry_run: bool
    max_iterations: int | None
    max_cost_usd: float | None
    repo: str
    remembered: Remembered


@dataclass(frozen=True)
class Found:
    """What the run found: its inputs, the manifests, and the schedule's pull request."""

    inputs: str
    manifests: tuple[str, ...]
    finding: Finding
    pull: providers.PullInfo | None


def run_scheduled(session: Session, ctx: JobContext) -> RunResult:
    """A scheduled run; `session` is the run's, in which the pipeline's plan and push record
    theirs."""
    run = _load(ctx.job_id)
    if run is None:
        return RunResult(JobState.FAILED, Outcome.ERROR, error="its schedule was removed")
    try:
        return _run(session, run, ctx)
    except ENDING_ERRORS as error:
        return ended_by(error)
    except CallbackError as error:
        reason = f"I could not reach the forge for this scheduled run: {error}"
        return RunResult(JobState.FAILED, Outcome.ERROR, error=reason)


def _load(job_id: int) -> ScheduledRun | None:
    return in_transaction(_read_run, job_id)


def _read_run(session: Session, job_id: int) -> ScheduledRun | None:
    job = jobs.get_job(session, job_id)
    trigger = read_trigger(job.trigger)
    schedule_id = trigger.schedule_id if isinstance(trigger, triggers.ScheduleRun) else None
    schedule = session.get(Schedule, schedule_id) if schedule_id is not None else None
    if schedule is None:
        return None
    return ScheduledRun(
        job_id=job.id,
        trigger=trigger,
        requester_id=job.requester_id,
        branch=job.branch,
        title=job.task,
        schedule_id=schedule.id,
        name=schedule.name,
        task=schedule.task,
        prompt=schedule.prompt,
        test_command=schedule.test_command,
        dry_run=schedule.dry_run,
        max_iterations=schedule.max_iterations,
        max_cost_usd=schedule.max_cost_usd,
        repo=schedule.repository.repo,
        remembered=Remembered(
            schedule.pull_state, schedule.pull_branch, schedule.pull_head, schedule.pull_inputs
        ),
    )


def _run(session: Session, run: ScheduledRun, ctx: JobContext) -> RunResult:
    forge_name, full_name = parse_repo_spec(run.repo)
    forge = registry.forge(forge_name, run.trigger, run.requester_id, ctx.settings)
    repo = forge.repository(full_name)
    env = forge.git_env(repo.clone_url)
    with look.scratch_clone(ctx.settings.sandbox_workspace_root, repo.clone_url, env) as clone:
        ref = git_repo.default_ref(clone)
        found = _find(run, forge, full_name, clone, ref, ctx.settings.bot_name)
        decision = decide(run.remembered, found.finding, found.inputs)
        in_transaction(pulls.remember, run.schedule_id, decision.remembered)
        if decision.action is Action.SKIP_EDITED and found.pull is not None:
            _note_edited(run, forge_name, full_name, found.pull)
        if decision.action in (Action.SKIP_EDITED, Action.SKIP_DECLINED):
            return _skipped(decision.action, found.inputs, _SKIPPED[decision.action])
        plan = _plan(run, forge_name, repo, decision, found.pull)
        context: str | None = None
        if run.task == FIX_DEFAULT_BRANCH:
            checked = _check_tests(run, ctx, clone, ref, plan, found.inputs)
            if isinstance(checked, RunResult):
                return checked
            context = checked
    instruction = build_instruction(run.task, run.prompt, found.manifests, run.test_command)
    return _work(session, run, ctx, plan, decision, instruction, context, env, found.inputs)


# --- looking


def _find(
    run: ScheduledRun, forge: providers.Forge, full_name: str, clone: Clone, ref: str, bot: str
) -> Found:
    manifests = look.manifests(clone, ref)
    inputs = Inputs(
        run.task,
        run.prompt,
        run.test_command,
        run.max_iterations,
        run.max_cost_usd,
        manifests.digest,
    ).digest()

    def was_opened(branch: str) -> bool:
        return in_transaction(pulls.was_opened, run.schedule_id, branch)

    finding, pull = pulls.find(forge, full_name, run.remembered, clone, ref, bot, was_opened)
    return Found(inputs, manifests.paths, finding, pull)


def _note_edited(
    run: ScheduledRun, forge_name: str, full_name: str, pull: providers.PullInfo
) -> None:
    """Leave the note once (published after its commit) on the pull request someone took over."""
    notice = pulls.build_edited_notice(
        run.job_id, run.schedule_id, run.name, forge_name, full_name, pull, run.trigger
    )
    callback_id = in_transaction(record_notice, notice)
    if callback_id is not None:
        publish_callback(callback_id)


# --- skipping


_SKIPPED: Final = {
    Action.SKIP_EDITED: (
        "Someone else has pushed to this schedule's pull request branch, so I leave it alone "
        "until the pull request is merged or closed."
    ),
    Action.SKIP_DECLINED: (
        "This schedule's last pull request was closed without merging, and nothing it depends "
        "on has changed since, so I do not propose it again."
    ),
}


def _skipped(action: str, inputs: str, summary: str) -> RunResult:
    details: JsonObject = {"action": action, "inputs": inputs}
    result: JsonObject = {"summary": summary, "changed": False, "schedule": details}
    return RunResult(JobState.SUCCEEDED, Outcome.NO_CHANGES, result=result)


# --- planning and testing


def schedule_branch(name: str) -> str:
    return f"{BRANCH_PREFIX}schedule-{slugify(name)}"


def _plan(
    run: ScheduledRun,
    forge_name: str,
    repo: providers.RepoInfo,
    decision: Decision,
    pull: providers.PullInfo | None,
) -> Plan:
    base = repo.default_branch
    if decision.action is Action.UPDATE and pull is not None:
        branch = decision.remembered.branch or pull.head
        return Plan(forge_name, repo, base, branch, branch, update=True, pr_url=pull.url)
    return Plan(forge_name, repo, base, run.branch or schedule_branch(run.name))


def _check_tests(
    run: ScheduledRun, ctx: JobContext, clone: Clone, ref: str, plan: Plan, inputs: str
) -> RunResult | str:
    """Run the test command on what the agent would work on: a result when there is nothing
    to fix (or no command), else the failing run as context for the agent."""
    command = look.find_test_command(clone, ref, run.test_command)
    if command is None:
        error = (
            "fix-default-branch needs a test command: set `test_command` in the schedule, or "
            "in the default branch's .resolver/config.yml"
        )
        return RunResult(JobState.FAILED, Outcome.COULD_NOT, error=error)
    done, setup_failed = look.run_tests(run.job_id, clone, ref, plan.checkout, command, ctx)
    _record_tests(run.job_id, command, done.exit_code, done.output)
    if setup_failed is not None:
        reason = f"The repository's setup failed, so the tests did not run. {setup_failed}"
        return RunResult(JobState.FAILED, Outcome.ERROR, error=reason)
    if done.ok:
        summary = f"`{command}` passes: nothing to fix."
        return _skipped(TESTS_PASS, inputs, summary)
    return failure_context(command, done.exit_code, done.output)


def _record_tests(job_id: int, command: str, exit_code: int, output: str) -> None:
    payload = {"command": command, "exit_code": exit_code, "output": output[-4000:]}
    in_transaction(jobs.append_event, job_id, "tests", payload, Redactor(()))


# --- working


def _work(
    session: Session,
    run: ScheduledRun,
    ctx: JobContext,
    plan: Plan,
    decision: Decision,
    instruction: str,
    context: str | None,
    env: dict[str, str],
    inputs: str,
) -> RunResult:
    request = SessionRequest(
        job_id=run.job_id,
        repo=plan.repo.clone_url,
        instruction=instruction,
        context=TaskContext(kind="schedule", title=run.title, body=context),
        branch=plan.checkout,
        git_env=env,
        max_iterations=run.max_iterations,
        max_cost_usd=run.max_cost_usd,
    )
    if run.dry_run:
        done = run_session(request, ctx)
        details: JsonObject = {"action": DRY_RUN, "inputs": inputs, "diff": done.diff[:MAX_DIFF]}
    else:
        record_plan(session, run.job_id, plan)
        pushed: dict[str, str] = {}
        with branch_lock(plan, ctx):
            take_back_push(session, run.job_id, plan, env, ctx.settings)
            done = run_session(
                request, ctx, after=_pushing(session, run, plan, env, pushed, ctx.settings)
            )
        if pushed:
            remembered = Remembered(OPEN, pushed["branch"], pushed["head"], inputs)
            in_transaction(pulls.remember, run.schedule_id, remembered)
        details = {"action": decision.action.value, "inputs": inputs}
    outcome = run_result(
        done.agent, done.diff, done.notes, done.egress, done.verification, done.files
    )
    result: JsonObject = {**outcome.result, "schedule": details}
    return RunResult(outcome.state, outcome.outcome, outcome.error, result)


def _pushing(
    session: Session,
    run: ScheduledRun,
    plan: Plan,
    env: dict[str, str],
    pushed: dict[str, str],
    settings: Settings,
) -> AfterAgent:
    """The pipeline's push, noting the branch and commit it pushed (the schedule remembers
    them: the next run updates that pull request, or tells whether it was merged)."""
    snapshot = Snapshot(
        id=run.job_id,
        source=SOURCE,
        task=run.title,
        repo=plan.repo.full_name,
        requester=None,
        requester_id=run.requester_id,
        trigger=run.trigger,
        branch=run.branch,
        earlier=None,
    )

    def noted(branch: str, head: str) -> None:
        pushed.update(branch=branch, head=head)
        log(logger, logging.INFO, "schedule.pushed", job=run.job_id, branch=branch)

    # Nobody asked for a scheduled run, so nobody is credited as its co-author.
    return push(session, snapshot, plan, env, NO_CO_AUTHOR, settings, on_pushed=noted)
