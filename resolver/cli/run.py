"""`resolver run`: the agent loop on a local repository, without webhooks or callbacks.

It takes the worker's code path (`resolver.agent.session.run_session`) and prints the
trajectory, the diff, the cost and the outcome. Heavy imports (litellm, docker) wait until the
command runs.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

import typer

from resolver.cli.transaction import in_transaction
from resolver.contract.results import read_result

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from resolver.agent.events import Event
    from resolver.agent.session import SessionResult
    from resolver.core.job import JobContext, RunResult
    from resolver.core.settings import Settings


def run(
    repo: str = typer.Option(..., help="Path or URL of the repository."),
    task: str = typer.Option(..., help="What the agent should do."),
    branch: str | None = typer.Option(None, help="Branch to work on (default: the default)."),
) -> None:
    """Run the agent on a repository and print its trajectory, diff, cost and outcome."""
    from resolver.core.logs import configure_logging
    from resolver.core.settings import get_settings
    from resolver.store.migrate import upgrade

    settings = get_settings()
    configure_logging("WARNING", settings.log_format)
    upgrade(settings.database_url)
    job_id = in_transaction(_create_job, repo, task)
    typer.echo(f"job {job_id}: running the agent on {repo}")
    outcome, session = _run(job_id, repo, task, branch, settings)
    in_transaction(_record, job_id, outcome)
    _print_report(job_id, outcome, session)
    raise typer.Exit(0 if outcome.state == "succeeded" else 1)


def _create_job(session: Session, repo: str, task: str) -> int:
    from resolver.core.states import JobState
    from resolver.store import jobs

    job = jobs.create_job(session, jobs.NewJob(source="cli", task=task, repo=repo))
    # Running from the start: a queued job without a message would be "repaired" by the
    # reconciler and handed to a worker.
    jobs.transition(job, JobState.RUNNING)
    job.lease_owner = "cli"
    return job.id


def _run(
    job_id: int, repo: str, task: str, branch: str | None, settings: Settings
) -> tuple[RunResult, SessionResult | None]:
    from resolver.agent.git import RepoError
    from resolver.agent.llm import LLMError
    from resolver.agent.request import SessionRequest
    from resolver.agent.result import run_result
    from resolver.agent.session import run_session
    from resolver.agent.task import InvalidLimitError
    from resolver.core.job import JobContext, RunResult
    from resolver.core.logs import redact
    from resolver.core.model_choice import ModelNotAllowedError
    from resolver.core.states import JobState, Outcome
    from sandbox import ChangeRejectedError, EgressConfigError, RepoSetupError, SandboxError

    ctx = JobContext(job_id, settings, "cli")
    request = SessionRequest(job_id=job_id, repo=repo, instruction=task, branch=branch)
    try:
        with _cancel_on_interrupt(ctx):
            session = run_session(request, ctx)
    except (
        RepoError,
        RepoSetupError,
        EgressConfigError,
        InvalidLimitError,
        LLMError,
        SandboxError,
        ChangeRejectedError,
        ModelNotAllowedError,
    ) as error:
        return RunResult(JobState.FAILED, Outcome.ERROR, error=redact(str(error))), None
    return run_result(session.agent, session.diff, session.notes, session.egress), session


@contextmanager
def _cancel_on_interrupt(ctx: JobContext) -> Iterator[None]:
    """The first Ctrl-C cancels the job cleanly (the sandbox kills the running command)."""

    def handler(_signum: int, _frame: FrameType | None) -> None:
        typer.echo("\ncancelling… (Ctrl-C again to abort)", err=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # Off the main thread: the interrupt talks to the engine while a command streams.
        threading.Thread(target=ctx.cancel, daemon=True).start()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _record(session: Session, job_id: int, outcome: RunResult) -> None:
    from resolver.store import jobs

    job = jobs.get_job(session, job_id)
    jobs.finish_job(
        session, job, outcome.state, outcome.outcome, error=outcome.error, result=outcome.result
    )
    job.lease_owner = None


def _print_report(job_id: int, outcome: RunResult, session: SessionResult | None) -> None:
    from resolver.agent.render import render_trajectory
    from resolver.core.logs import redact

    events, cost, prompt, completion = in_transaction(_recorded, job_id)
    typer.echo("\n== trajectory\n" + render_trajectory(events))
    diff = session.diff if session else ""
    typer.echo("\n== diff\n" + (redact(diff).rstrip() or "(no changes)"))
    for note in session.notes if session else ():
        typer.echo(f"note: {note}")
    price = "unknown" if cost is None else f"${cost:.4f}"
    typer.echo(f"\n== cost\n{price} ({prompt} prompt + {completion} completion tokens)")
    summary = read_result(outcome.result).summary or outcome.error or ""
    typer.echo(f"\n== outcome\n{outcome.state} / {outcome.outcome}\n{summary}")


def _recorded(session: Session, job_id: int) -> tuple[list[Event], float | None, int, int]:
    """The job's trajectory, cost and tokens, as recorded."""
    from resolver.agent.events import Event
    from resolver.store import jobs

    job = jobs.get_job(session, job_id)
    events = [Event(e.seq, e.kind, e.payload) for e in job.events]
    return events, job.cost_usd, job.prompt_tokens, job.completion_tokens
