"""`conflicts: fix` (the default branch's `.resolver/config.yml`): after a push to the default
branch, each of the bot's open pull requests on it that no longer merges cleanly is updated as
`@bot rebase` would (`worker.update`), once per base commit, never over a human's push."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from integrations import registry
from resolver.agent import git as git_repo
from resolver.contract import outbound as providers
from resolver.contract.errors import CallbackError
from resolver.contract.results import PullDone, read_result
from resolver.contract.triggers import JsonObject, base_push_in, pull_of
from resolver.core.job import JobContext, RunResult
from resolver.core.states import JobState, Outcome
from resolver.features.ci.contract import QUIET
from resolver.features.conflicts.contract import (
    ConflictsConfig,
    ConflictsConfigError,
    once_key,
    parse_conflicts_config,
)
from resolver.features.conflicts.worker import Gate, bot_from, bots_own, update
from resolver.store import bot_pulls, ci_attempts, jobs
from resolver.store.db import session_scope
from resolver.worker.plan import co_author, repo_info, repository_of
from resolver.worker.push import branch_lock
from resolver.worker.request import quiet_end
from resolver.worker.values import ENDING_ERRORS, Plan, Snapshot, Stop, ended_by

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_HEAD_FORMAT: Final = "--format=%ae%x00%ce"


def update_on_base_push(session: Session, ctx: JobContext, snapshot: Snapshot) -> RunResult:
    """`conflicts: fix`: after a push to the default branch, update each of the bot's open pull
    requests on it that no longer merges cleanly, as `@bot rebase` would. The job speaks in no
    conversation (a push has none); what it did to each pull request is its result."""
    push = base_push_in(snapshot.trigger)
    _keep_quiet(ctx.job_id)
    try:
        forge_name, full_name = repository_of(session, snapshot)
        forge = registry.forge(forge_name, snapshot.trigger, snapshot.requester_id, ctx.settings)
        repo = repo_info(snapshot, forge, forge_name, full_name)
        if push is None or push.branch != repo.default_branch:
            return quiet_end(snapshot, "the push is not to the default branch")
        git_env = forge.git_env(repo.clone_url)
        opted_in = _config(repo, git_env, ctx.settings.sandbox_workspace_root).fix
        _remember(forge_name, full_name, push.sha, opted_in)
        if not opted_in:
            return quiet_end(snapshot, "`conflicts: fix` is not set in .resolver/config.yml")
        lister = registry.get(forge_name).open_pulls
        if lister is None:
            return quiet_end(snapshot, f"{forge_name} pull requests cannot be listed")
        pulls = lister(
            snapshot.trigger, snapshot.requester_id, full_name, push.branch, ctx.settings
        )
        _remember_pulls(forge_name, full_name, push.branch, pulls)
    except Stop as stop:
        return _quiet(ended_by(stop))
    except CallbackError as error:
        return _quiet(
            RunResult(JobState.FAILED, Outcome.ERROR, error=f"I could not prepare this: {error}")
        )
    done: dict[str, RunResult] = {}
    for pull in pulls:
        if bots_own(pull):
            done[str(pull.number)] = _update_pull(ctx, snapshot, forge, repo, pull, git_env)
    return _quiet(_combined(done))


def _remember(forge_name: str, full_name: str, sha: str, opted_in: bool) -> None:
    """What intake decides the next push on (`ingress.concerns`): the option as read now."""
    with session_scope() as session:
        bot_pulls.remember_option(session, forge_name, full_name, sha, "conflicts", opted_in)


def _remember_pulls(
    forge_name: str, full_name: str, base: str, pulls: tuple[providers.PullInfo, ...]
) -> None:
    """The forge's listing of the bot's open pull requests into `base` is what holds now."""
    ours = [(pull.number, pull.head) for pull in pulls if bots_own(pull)]
    with session_scope() as session:
        bot_pulls.replace_into_base(session, forge_name, full_name, base, ours)


def _keep_quiet(job_id: int) -> None:
    """No status message while it runs either: a push has no conversation to speak in."""
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        jobs.note_result(job, {QUIET: True})


def _config(repo: providers.RepoInfo, git_env: dict[str, str], root: Path) -> ConflictsConfig:
    """`conflicts` from `.resolver/config.yml` on the default branch, through the existing
    helper; Stop with what is wrong when it is not valid."""
    with git_repo.private_clone(repo.clone_url, root, None, git_env, shallow=True) as clone:
        try:
            return parse_conflicts_config(git_repo.repo_config(clone, git_repo.default_ref(clone)))
        except (ConflictsConfigError, git_repo.RepoError) as error:
            message = f"I cannot update my pull requests' branches: {error}"
            raise Stop(Outcome.COULD_NOT, message) from None


def _update_pull(
    ctx: JobContext,
    snapshot: Snapshot,
    forge: providers.Forge,
    repo: providers.RepoInfo,
    pull: providers.PullInfo,
    git_env: dict[str, str],
) -> RunResult:
    """One pull request, for the requester of the job that made its branch (who must still be
    allowed to push), only when it conflicts, once per base commit, and never over someone
    else's push to it."""
    forge_name = snapshot.source
    requester = _branch_requester(forge_name, repo.full_name, pull.head)
    if requester is None:
        return _skipped(f"no job of mine made `{pull.head}`")
    try:
        if not forge.can_write(repo.full_name, requester):
            return _skipped(f"its requester may no longer push to `{repo.full_name}`")
    except CallbackError as error:
        return RunResult(JobState.FAILED, Outcome.ERROR, error=f"I could not check: {error}")
    base = pull.base or repo.default_branch
    plan = Plan(forge_name, repo, base, pull.head, pull.head, True, pull.url)
    trigger = pull_of(snapshot.trigger, pull.number, f"Merge `{base}` into `{pull.head}`", pull.url)
    for_pull = replace(snapshot, requester=requester.login, trigger=trigger, branch=pull.head)
    gate = _gate(plan, pull.number, bot_from(ctx.settings))
    try:
        with branch_lock(plan, ctx):
            author = co_author(forge_name, requester, ctx.settings)
            return update(ctx, for_pull, plan, git_env, author, gate)
    except ENDING_ERRORS as error:
        return ended_by(error)


def _branch_requester(forge_name: str, full_name: str, branch: str) -> providers.ForgeUser | None:
    with session_scope() as session:
        found = ci_attempts.branch_owner(session.connection(), forge_name, full_name, branch)
    sender = found.origin.sender if found else None
    if sender is None or not sender.id:
        return None
    return providers.ForgeUser(sender.id, sender.login or None)


def _gate(plan: Plan, number: int, bot: tuple[str, str]) -> Gate:
    def gate(
        clone: git_repo.Clone, ours: str, theirs: str, conflicts: tuple[str, ...]
    ) -> str | None:
        if not conflicts:
            return f"`{plan.branch}` still merges cleanly with `{plan.base}`"
        emails = git_repo.git(clone, "log", "-1", _HEAD_FORMAT, ours).strip().split("\0")
        if {email.lower() for email in emails} != {bot[1].lower()}:
            return (
                f"someone else pushed to `{plan.branch}` (its head {ours[:12]} is not mine): "
                "left to them"
            )
        with session_scope() as session:
            key = once_key(number, theirs)
            taken = ci_attempts.claim_attempt(session, plan.forge_name, plan.repo.full_name, key, 1)
        if taken is None:
            return f"already updated once for `{plan.base}` at {theirs[:12]}"
        return None

    return gate


def _skipped(why: str) -> RunResult:
    return RunResult(JobState.SUCCEEDED, Outcome.NO_CHANGES, result={"summary": why})


def _combined(done: dict[str, RunResult]) -> RunResult:
    """One result for the job: every pull request's, by number; failed if any failed, changed
    if any was pushed."""
    pulls: JsonObject = {str(number): _done(result) for number, result in done.items()}
    failed = [f"#{n}: {r.error}" for n, r in done.items() if r.state == JobState.FAILED]
    if failed:
        error = " ".join(failed)
        return RunResult(JobState.FAILED, Outcome.COULD_NOT, error=error, result={"pulls": pulls})
    changed = any(r.outcome == Outcome.CHANGED_CODE for r in done.values())
    outcome = Outcome.CHANGED_CODE if changed else Outcome.NO_CHANGES
    return RunResult(JobState.SUCCEEDED, outcome, result={"pulls": pulls})


def _done(result: RunResult) -> JsonObject:
    """How the job ended on one pull request, as its result keeps it (`PullDone`)."""
    ran = read_result(result.result)
    return PullDone(
        state=str(result.state),
        outcome=str(result.outcome),
        summary=ran.summary,
        error=result.error,
        conflicts=ran.conflicts,
        unresolved=ran.unresolved,
    ).model_dump(mode="json")


def _quiet(result: RunResult) -> RunResult:
    return replace(result, result={**result.result, QUIET: True})
