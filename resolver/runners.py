"""The literal tables that say what runs a job and answers a command.

A job's runner is looked up by its `source`: a schedule's run, or a request from an installed
provider (`integrations.registry`). A request that is a command (`@bot stop`) is answered from
`COMMANDS` instead of running the agent. Only the worker that runs jobs loads this module (from
`resolver.tasks.run_job`): it brings the agent, its model client and the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from integrations import registry
from resolver.contract.commands import Command, parse_command
from resolver.contract.triggers import ReviewRequest, base_push_in
from resolver.core.job import JobContext, RunResult
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.features.conflicts import worker as conflicts
from resolver.features.conflicts.worker import fix as conflicts_fix
from resolver.features.review_requests.worker import run_review
from resolver.schedules import commands as schedule_commands
from resolver.schedules.queue import SOURCE as SCHEDULE_SOURCE
from resolver.schedules.runner import run_scheduled
from resolver.worker import commands, request
from resolver.worker.execute import Runner
from resolver.worker.values import Snapshot

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

COMMANDS: Final[dict[Command, Callable[[Session, Snapshot, Settings], RunResult]]] = {
    "stop": commands.answer_stop,
    "status": commands.answer_status,
    "run": schedule_commands.run,
}

WORK_COMMANDS: Final[dict[Command, Callable[[Session, JobContext, Snapshot], RunResult]]] = {
    "rebase": conflicts.update_branch
}
"""Commands that are work on a branch, run like a request (`@bot rebase`)."""


def run_request(session: Session, ctx: JobContext) -> RunResult:
    """A provider's request: a push to the default branch (`conflicts: fix`), a review, a
    command answered at once, or work for the agent; each in the run's session."""
    snapshot = request.load(session, ctx.job_id)
    if base_push_in(snapshot.trigger) is not None:
        return conflicts_fix.update_on_base_push(session, ctx, snapshot)
    if isinstance(snapshot.trigger, ReviewRequest):
        return run_review(session, ctx, snapshot)
    command = parse_command(snapshot.task)
    if command == "run" and not schedule_commands.names_a_schedule(session, snapshot):
        command = None  # "@bot run tests" asks for work when no schedule has that name
    work = WORK_COMMANDS.get(command) if command is not None else None
    if work is not None:
        return work(session, ctx, snapshot)
    if command is not None:
        return COMMANDS[command](session, snapshot, ctx.settings)
    return request.run_request(session, ctx, snapshot)


RUNNERS: Final[dict[str, Runner]] = {SCHEDULE_SOURCE: run_scheduled}
"""Runners by job source, besides the installed providers' requests (`run_request`)."""


def no_runner(_session: Session, _ctx: JobContext) -> RunResult:
    return RunResult(JobState.FAILED, Outcome.ERROR, error="no runner handles this kind of job")


def runner_for(source: str) -> Runner:
    found = RUNNERS.get(source)
    if found is not None:
        return found
    return run_request if registry.find(source) is not None else no_runner
