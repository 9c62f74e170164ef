"""Pushing a job's work: one job at a time on a branch, and the bot's commit with the
requester as co-author."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from resolver.agent import git as git_repo
from resolver.agent.session import AfterAgent, Work
from resolver.agent.task import AgentResult
from resolver.broker import locks
from resolver.contract.results import BranchPush, read_result
from resolver.core import tracing
from resolver.core.job import JobContext
from resolver.core.logs import log
from resolver.core.settings import Settings
from resolver.core.states import Outcome
from resolver.store import jobs
from resolver.store.db import end_step
from resolver.worker.branches import build_commit_message
from resolver.worker.values import Plan, Snapshot, Stop

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)

BRANCH_LOCK_WAIT: Final = 60


@contextmanager
def branch_lock(plan: Plan, ctx: JobContext, wait: float = BRANCH_LOCK_WAIT) -> Iterator[None]:
    """Two jobs never push to the same branch at once: the second waits `wait` seconds. The
    lock lives a few lease periods and is renewed by the job's heartbeat, so a killed worker's
    lock lapses as its job's lease does."""
    name = f"resolver:branch:{plan.forge_name}:{plan.repo.full_name}:{plan.branch}"
    with locks.held(
        name, ctx.settings.redis_url, timeout=ctx.settings.lease_seconds * 3, wait=wait
    ) as lock:
        if not lock.acquired:
            raise Stop(
                Outcome.ERROR,
                f"another job is working on `{plan.branch}`; "
                "mention me again when it has finished.",
            )
        ctx.on_beat.append(lock.renew)
        try:
            yield
        finally:
            ctx.on_beat.remove(lock.renew)


def push(
    session: Session,
    snapshot: Snapshot,
    plan: Plan,
    env: dict[str, str] | None,
    author: tuple[str, str],
    settings: Settings,
    on_pushed: Callable[[str, str], None] | None = None,
) -> AfterAgent:
    """The after-agent hook: commit the agent's tree as the bot and push it to the job's own
    repository (a new branch's name is committed in `session`, the run's, first); `on_pushed`
    hears the branch and commit. Unfinished work is pushed (without a pull request) only when
    RESOLVER_PUSH_UNFINISHED."""
    bot = settings.bot_name

    def after(work: Work, agent: AgentResult) -> None:
        unfinished = agent.outcome in ("could_not", "stopped") and settings.push_unfinished
        if work.tree is None or (agent.outcome != "changed_code" and not unfinished):
            return
        branch = plan.branch
        if not plan.update and snapshot.branch is None:
            if git_repo.remote_branch_exists(work.clone, branch, env):
                branch = f"{branch}-{snapshot.id}"  # someone else's branch has that name
            # Recorded before the push: a retry of this job knows the branch is its own.
            jobs.get_job(session, snapshot.id).branch = branch
            end_step(session)
        title = snapshot.trigger.title or snapshot.task
        message = build_commit_message(title, agent.summary, *author)
        sha = git_repo.commit(work.clone, work.tree, work.base, message, bot_identity(bot))
        if plan.update:
            # Recorded before the push: a retry of this job takes it back (`take_back_push`).
            pushing = BranchPush(branch=branch, base=work.base, sha=sha)
            jobs.note_result(jobs.get_job(session, snapshot.id), {"pushing": pushing.model_dump()})
            end_step(session)
        # The job's own new branch may hold an earlier attempt's commit: replace it. A pull
        # request's branch only moves forward; if someone pushed meanwhile, the push fails.
        with tracing.span("git.push", forced=not plan.update):
            git_repo.push(work.clone, sha, branch, force=not plan.update, auth=env)
        log(logger, logging.INFO, "job.branch_pushed", job=snapshot.id, branch=branch)
        if on_pushed is not None:
            on_pushed(branch, sha)

    return after


def take_back_push(
    session: Session, job_id: int, plan: Plan, env: dict[str, str] | None, settings: Settings
) -> None:
    """Before a retry works, take back the push an earlier attempt of the job made onto a pull
    request's branch (its worker died before recording the job), so that the work is done
    once, from the head the pull request had. The branch moves back only while it still holds
    that push: a commit someone added since is never overwritten. A step of `session`."""
    pushing = read_result(jobs.get_job(session, job_id).result).pushing
    end_step(session)
    if pushing is None:
        return
    root = settings.sandbox_workspace_root
    with git_repo.private_clone(plan.repo.clone_url, root, None, env) as clone:
        head = git_repo.remote_head(clone, pushing.branch)
        if head == pushing.sha:
            with tracing.span("git.push", forced=True):
                git_repo.push_over(clone, pushing.base, pushing.branch, expected=head, auth=env)
            log(logger, logging.INFO, "job.push_taken_back", job=job_id, branch=pushing.branch)
        elif head != pushing.base:
            # Moved on since (or gone): whatever it holds now is left as it is.
            log(logger, logging.WARNING, "job.push_left", job=job_id, branch=pushing.branch)
    jobs.note_result(jobs.get_job(session, job_id), {"pushing": None, "pushed_sha": None})
    end_step(session)


def bot_identity(bot: str) -> tuple[str, str]:
    """The name and address the bot commits as."""
    return bot, f"{bot}@users.noreply"
