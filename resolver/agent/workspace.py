"""The job's sandbox and the repository in it: started with its copy of the host's clone (and
its proxy's plan), then stopped to read the agent's change back out as checked data."""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Final

from resolver.agent import git as git_repo
from resolver.agent.egress import JobEgress
from resolver.agent.sandboxes import claim_sandbox
from resolver.agent.task import AgentResult
from resolver.core import tracing
from resolver.core.job import JobContext
from resolver.core.sanitize import code_span
from resolver.core.settings import Settings
from sandbox import Change, ChangeRejectedError, EgressPlan, ExportLimits, Sandbox, SandboxPolicy

CHECKOUT: Final = "git reset --quiet --hard HEAD"


def egress_plan(egress: JobEgress, has_setup: bool) -> EgressPlan | None:
    """The sandbox's proxy, starting with the first phase's list; None: no network at all."""
    if not egress.needed:
        return None
    return EgressPlan(egress.setup if has_setup else egress.agent, egress.env)


@contextmanager
def started(
    name: str,
    policy: SandboxPolicy,
    ctx: JobContext,
    plan: EgressPlan | None,
    clone: git_repo.Clone,
    settings: Settings,
) -> Iterator[Sandbox]:
    """The job's sandbox with its copy of the repository: its start is one span."""
    with ExitStack() as stack:
        with tracing.span("sandbox.start"):
            sandbox = stack.enter_context(claim_sandbox(name, policy, ctx.owner, plan))
            load_repository(sandbox, clone, policy, settings.sandbox_setup_timeout)
        yield sandbox


def load_repository(
    sandbox: Sandbox,
    clone: git_repo.Clone,
    policy: SandboxPolicy,
    setup_timeout: float,
    checkout: str | None = None,
) -> None:
    """Give the sandbox its own copy of the clone and check it out there: HEAD, or the branch
    `checkout` (from `origin/…`)."""
    with tempfile.TemporaryFile(dir=clone.path) as archive:
        git_repo.pack_for_sandbox(clone, archive, policy.user)
        archive.seek(0)
        sandbox.load(archive)
    command = f"git checkout --quiet --force {shlex.quote(checkout)} --" if checkout else CHECKOUT
    done = sandbox.run(command, timeout=setup_timeout)
    if not done.ok:
        raise git_repo.RepoError(
            f"the repository could not be checked out in the sandbox: {done.output[-500:]}"
        )


def export_limits(settings: Settings) -> ExportLimits:
    return ExportLimits(
        max_files=settings.sandbox_change_max_files,
        max_file_bytes=settings.sandbox_change_max_file_bytes,
        max_total_bytes=settings.sandbox_change_max_bytes,
    )


def take_change(
    sandbox: Sandbox,
    clone: git_repo.Clone,
    base: str,
    agent: AgentResult,
    settings: Settings,
    ctx: JobContext,
) -> tuple[Change, str | None]:
    """Stop the sandbox and read the agent's change. A change that breaks a limit ends the job
    when it was meant to be pushed; otherwise it is only noted."""
    if ctx.cancelled.is_set():
        return Change(), None
    listing = git_repo.base_listing(clone, base)
    try:
        with tracing.span("sandbox.export"):
            change = sandbox.export(listing, export_limits(settings))
            tracing.note(files=len(change.files), deleted=len(change.deleted))
        return change, None
    except ChangeRejectedError as error:
        if agent.outcome == "changed_code" or settings.push_unfinished:
            raise
        return Change(), f"The files the agent left were not read: {error}."


def change_notes(change: Change) -> tuple[str, ...]:
    """What the requester should know about how the change was taken."""
    notes = []
    if change.stopped_processes:
        notes.append(
            f"The agent left {change.stopped_processes} process(es) running; they were stopped "
            "before its work was read, so nothing they did afterwards is part of the change."
        )
    if change.skipped:
        shown = ", ".join(code_span(path) for path in change.skipped[:5])
        notes.append(f"Nested repositories are never part of a change, so {shown} was left out.")
    return tuple(notes)
