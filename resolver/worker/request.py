"""The worker's runner for a person's request (from any installed provider), once it is work
rather than a command (`resolver.runners.run_request` answers those from `COMMANDS`).

1. Plan: the forge and repository (the trigger's own, `repo=`, or a configured route:
   `worker/plan.py`), and the branch (a new `resolver/…` branch, or the branch of the bot's
   open pull request).
2. Permission: the requester must be able to push to the repository; else a polite refusal.
3. Acknowledge: 👀 and the status message, sent by callbacks.
4. Clone privately on the host with the forge's token, run setup and the agent in the
   sandbox, take its change out as data, commit it as the bot and push (`worker/push.py`). The
   pull request and the final status are sent by callbacks when the worker records the job
   (`worker/execute.py` → `callbacks.record.record_finish`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from integrations import registry
from resolver.agent.request import SessionRequest
from resolver.agent.result import run_result
from resolver.agent.session import run_session
from resolver.agent.task import TaskContext
from resolver.callbacks import record
from resolver.contract import outbound as providers
from resolver.contract.errors import CallbackError
from resolver.contract.outbound import Comment
from resolver.contract.results import read_result
from resolver.contract.triggers import (
    ChatThread,
    Planned,
    dump_trigger,
    failed_check_in,
    is_pull,
    number_of,
    read_trigger,
    with_planned,
)
from resolver.core.job import JobContext, RunResult
from resolver.core.logs import log
from resolver.core.model_choice import allowed_models, parse_model_option, refusal
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.features.ci.contract import QUIET, ci_status_line
from resolver.features.ci.worker import QuietStop, check_fix
from resolver.features.reviews.worker import (
    gather_review,
    note_pushed,
    resolves_threads,
    take_review,
)
from resolver.store import conversations, jobs
from resolver.store.db import end_step
from resolver.worker.branches import BRANCH_PREFIX, build_branch_name
from resolver.worker.plan import co_author, is_forge, prepare
from resolver.worker.push import branch_lock, push, take_back_push
from resolver.worker.values import ENDING_ERRORS, Earlier, Plan, Snapshot, Stop, ended_by

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

HISTORY_NOTE: Final = "(an earlier request in this conversation)"


def run_request(session: Session, ctx: JobContext, snapshot: Snapshot) -> RunResult:
    """Do the work a person asked for: plan the repository, run the agent, push its change.
    `session` is the run's (`worker.execute`)."""
    try:
        # A model outside the list is refused before any work.
        requested_model(snapshot.task, ctx.settings)
        plan, requester, git_env = prepare(session, snapshot, _plan, ctx.settings)
        check = failed_check_in(snapshot.trigger)
        settings = ctx.settings
        fixing = check_fix(settings, snapshot, plan, check, git_env) if check is not None else None
        resolving = resolves_threads(snapshot, plan, git_env, settings.sandbox_workspace_root)
    except QuietStop as quiet:
        return quiet_end(snapshot, str(quiet))
    except Stop as stop:
        return ended_by(stop)
    except CallbackError as error:
        reason = f"I could not prepare this job: {error}"
        return RunResult(JobState.FAILED, Outcome.ERROR, error=reason)
    record_plan(session, ctx.job_id, plan)
    gather_review(snapshot, ctx.cancelled)
    history = take_review(snapshot, _history(snapshot, ctx.settings), resolving)
    if fixing is not None:
        history = providers.History(history.comments + fixing[2], history.review_threads)
    instruction, model = requested_model(snapshot.task, ctx.settings)
    request = SessionRequest(
        job_id=ctx.job_id,
        repo=plan.repo.clone_url,
        instruction=instruction,
        model=model,
        context=_context(snapshot, plan, history),
        branch=plan.checkout,
        pull_base=plan.base,
        requester=snapshot.requester,
        git_env=git_env,
        # Masked in the trajectory too: git errors may quote the auth header.
        secrets=tuple(v for k, v in git_env.items() if k.startswith("GIT_CONFIG_VALUE")),
    )
    try:
        with branch_lock(plan, ctx):
            take_back_push(session, ctx.job_id, plan, request.git_env, ctx.settings)
            author = co_author(plan.forge_name, requester, ctx.settings)
            after = push(
                session,
                snapshot,
                plan,
                request.git_env,
                author,
                ctx.settings,
                note_pushed(ctx.job_id),
            )
            done = run_session(request, ctx, after=after)
    except ENDING_ERRORS as error:
        return ended_by(error)
    notes = done.notes
    if check is not None and fixing is not None:
        notes = (ci_status_line(check, fixing[0], fixing[1]), *notes)
    return run_result(done.agent, done.diff, notes, done.egress, done.verification, done.files)


def quiet_end(snapshot: Snapshot, why: str) -> RunResult:
    """A red check left alone: the job ends without a message in the pull request."""
    log(logger, logging.INFO, "job.ci_fix_skipped", job=snapshot.id, why=why)
    return RunResult(JobState.SUCCEEDED, Outcome.NO_CHANGES, result={QUIET: True, "skipped": why})


def requested_model(task: str, settings: Settings) -> tuple[str, str | None]:
    """The request without its `model=NAME`, and that name; Stop when the operator does not
    allow it."""
    instruction, model = parse_model_option(task)
    allowed = allowed_models(settings.llm_model, settings.llm_models)
    if model is not None and model not in allowed:
        raise Stop(Outcome.REFUSED, refusal(model, "request", allowed))
    return instruction, model


# --- reading the job


def load(session: Session, job_id: int) -> Snapshot:
    """The job as its runner reads it, from one step of `session`."""
    job = jobs.get_job(session, job_id)
    previous = conversations.previous_in_conversation(session, job)
    earlier = None
    if previous is not None:
        earlier = Earlier(
            id=previous.id,
            task=previous.task,
            summary=read_result(previous.result).summary or "",
            branch=previous.branch,
            pr_url=previous.pr_url,
        )
    snapshot = Snapshot(
        id=job.id,
        source=job.source,
        task=job.task,
        repo=job.repo,
        requester=job.requester,
        requester_id=job.requester_id,
        trigger=read_trigger(job.trigger),
        branch=job.branch,
        earlier=earlier,
    )
    end_step(session)
    return snapshot


# --- planning


def _plan(
    snapshot: Snapshot, forge: providers.Forge, forge_name: str, repo: providers.RepoInfo
) -> Plan:
    number = number_of(snapshot.trigger)
    new_branch = snapshot.branch or build_branch_name(
        number, snapshot.trigger.title or snapshot.task, snapshot.id
    )
    if snapshot.source == forge_name and is_pull(snapshot.trigger) and number is not None:
        pull = forge.get_pull(repo.full_name, number)
        if pull.fetch_ref is not None:
            # Its branch lives in a fork, where the bot may not push, and a pull request into
            # it cannot be opened from here (even when the fork names its branch as the bot
            # names its own).
            raise Stop(
                Outcome.COULD_NOT,
                "This pull request comes from a fork, whose branch I cannot push to or open a "
                "pull request into. I can review it: mention me with `review`.",
            )
        if pull.head.startswith(BRANCH_PREFIX):
            # The bot's own pull request: continue on its branch.
            return Plan(forge_name, repo, repo.default_branch, pull.head, pull.head, True, pull.url)
        # Someone's pull request: propose changes on top of it, as a pull request into it.
        return Plan(forge_name, repo, pull.head, new_branch, checkout=pull.head)
    earlier = snapshot.earlier
    if earlier is not None and earlier.branch:
        still_open = forge.find_open_pull(repo.full_name, earlier.branch)
        if still_open is not None:
            return Plan(
                forge_name,
                repo,
                repo.default_branch,
                earlier.branch,
                earlier.branch,
                True,
                still_open.url,
            )
    fixes = number if snapshot.source == forge_name and not is_pull(snapshot.trigger) else None
    trigger = snapshot.trigger
    base = trigger.branch if isinstance(trigger, ChatThread) else None
    if base and not is_forge(snapshot.source):
        return Plan(forge_name, repo, base, new_branch, checkout=base)
    return Plan(forge_name, repo, repo.default_branch, new_branch, fixes=fixes)


def record_plan(session: Session, job_id: int, plan: Plan) -> None:
    """Keep the plan on the job (the callbacks read it), and bring its status up to date (the
    intake sent the 👀 and the first status): a step of `session`."""
    job = jobs.get_job(session, job_id)
    planned = Planned(
        provider=plan.forge_name, repo=plan.repo.full_name, base=plan.base, fixes=plan.fixes
    )
    job.trigger = dump_trigger(with_planned(read_trigger(job.trigger), planned))
    job.repo = job.repo or plan.repo.full_name
    if plan.update:
        job.pr_url = plan.pr_url
        job.branch = plan.branch
        jobs.note_result(job, {"updated_pull": True})
    callbacks = record.record_status(session, job)
    end_step(session)  # published after the commit: the outbox order
    record.publish_all(callbacks)


# --- context


def _history(snapshot: Snapshot, settings: Settings) -> providers.History:
    try:
        conversation = registry.conversation(
            snapshot.source, snapshot.trigger, snapshot.requester_id, settings
        )
        return conversation.history()
    except CallbackError as error:
        # The request itself is still known: go on without the surrounding thread.
        log(logger, logging.WARNING, "job.history_unavailable", job=snapshot.id, error=str(error))
        return providers.History()


def _context(snapshot: Snapshot, plan: Plan, history: providers.History) -> TaskContext:
    trigger = snapshot.trigger
    comments = list(history.comments)
    earlier = snapshot.earlier
    if earlier is not None:
        comments.insert(0, Comment(HISTORY_NOTE, earlier.task))
        if earlier.summary:
            comments.insert(1, Comment("Resolver (its answer then)", earlier.summary))
    kind: str = registry.get(snapshot.source).kind
    if kind == "issue" and is_pull(snapshot.trigger):
        kind = "pull_request"
    return TaskContext(
        kind=f"{snapshot.source}_{kind}",
        title=trigger.title,
        body=trigger.body,
        url=trigger.url,
        comments=tuple(comments),
        review_threads=history.review_threads,
    )
