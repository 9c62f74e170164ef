"""`@bot rebase` on the bot's own pull request: bring its branch up to date with the base.

The base is merged into the branch, never rebased over it: the new commit has the branch's
head as its first parent, so the push is a fast-forward and nobody's commits are rewritten.

1. A clean merge is made on the host's private clone from objects alone (`git merge-tree`),
   committed as the bot and pushed.
2. A merge with conflicts is committed there, markers and all, as the sandbox's starting
   point; the agent resolves the files in the sandbox; its change comes back as checked data
   onto that tree, like any change; a tree with no markers left in the conflicted files
   becomes the merge commit that is pushed.
3. Conflicts the agent leaves are reported with their files, and nothing is pushed (for
   `conflicts: fix`, in a comment on the pull request too: `conflicts.callbacks`).

`conflicts: fix` (the default branch's `.resolver/config.yml`) does the same without anyone
asking, when a push to the default branch leaves one of the bot's open pull requests on it
conflicted (`fix.update_on_base_push`): for the requester of the job that made the branch,
once per base commit per pull request, and never over a human's push to the branch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from resolver.agent import git as git_repo
from resolver.agent.merge import commit_merge, detach_head, merge_trees, with_markers
from resolver.agent.request import SessionRequest
from resolver.agent.result import MAX_FILES_LISTED, run_result
from resolver.agent.session import (
    SessionResult,
    Work,
    branch_files,
    run_in_clone,
)
from resolver.agent.task import AgentResult, TaskContext
from resolver.contract import outbound as providers
from resolver.contract.errors import CallbackError
from resolver.contract.triggers import JsonObject, is_pull, number_of
from resolver.core.job import JobContext, RunResult
from resolver.core.settings import Settings
from resolver.core.states import JobState, Outcome
from resolver.features.conflicts.contract import (
    MAX_FILES_NAMED,
    UNRESOLVED_KEY,
    Unresolved,
    render_unresolved,
)
from resolver.worker.branches import BRANCH_PREFIX, build_commit_message
from resolver.worker.plan import co_author, prepare
from resolver.worker.push import bot_identity, branch_lock
from resolver.worker.request import record_plan
from resolver.worker.values import ENDING_ERRORS, Plan, Snapshot, Stop, ended_by

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

# Whether to go on with a merge (None) or why not: the clone, the base commit, the conflicts.
Gate = Callable[[git_repo.Clone, str, str, tuple[str, ...]], str | None]


def update_branch(session: Session, ctx: JobContext, snapshot: Snapshot) -> RunResult:
    """Merge the pull request's base into the bot's branch, resolving conflicts with the
    agent where git cannot, and push the merge as a new commit. `session` is the run's."""
    try:
        plan, requester, git_env = prepare(session, snapshot, _plan, ctx.settings)
    except Stop as stop:
        return ended_by(stop)
    except CallbackError as error:
        return RunResult(JobState.FAILED, Outcome.ERROR, error=f"I could not prepare this: {error}")
    record_plan(session, ctx.job_id, plan)
    author = co_author(plan.forge_name, requester, ctx.settings)
    try:
        with branch_lock(plan, ctx):
            return update(ctx, snapshot, plan, git_env, author)
    except ENDING_ERRORS as error:
        return ended_by(error)


def _plan(
    snapshot: Snapshot, forge: providers.Forge, forge_name: str, repo: providers.RepoInfo
) -> Plan:
    """The bot's own pull request, or Stop: the command never touches anyone else's branch."""
    number = number_of(snapshot.trigger)
    if snapshot.source != forge_name or not is_pull(snapshot.trigger) or number is None:
        raise Stop(Outcome.COULD_NOT, "`rebase` works on a pull request I opened: ask me there.")
    pull = forge.get_pull(repo.full_name, number)
    if not bots_own(pull):
        raise Stop(
            Outcome.REFUSED,
            "I only update the branches of pull requests I opened; this one is not mine.",
        )
    base = pull.base or repo.default_branch
    return Plan(forge_name, repo, base, pull.head, pull.head, True, pull.url)


def bots_own(pull: providers.PullInfo) -> bool:
    """Whether the pull request is the bot's own: from one of its branches, never a fork's (a
    fork may name its branch as the bot names its own)."""
    return pull.fetch_ref is None and pull.head.startswith(BRANCH_PREFIX)


def update(
    ctx: JobContext,
    snapshot: Snapshot,
    plan: Plan,
    git_env: dict[str, str],
    author: tuple[str, str],
    gate: Gate | None = None,
) -> RunResult:
    """Merge `plan.base` into `plan.branch` on a private clone and push the merge: git's own
    when it is clean, else the agent's resolution. `gate` may stop it first, saying why."""
    root, bot = ctx.settings.sandbox_workspace_root, bot_from(ctx.settings)
    with git_repo.private_clone(plan.repo.clone_url, root, plan.branch, git_env) as clone:
        ours = git_repo.head(clone)
        theirs = git_repo.git(clone, "rev-parse", "--verify", f"origin/{plan.base}^{{commit}}")
        theirs = theirs.strip()
        if git_repo.is_ancestor(clone, theirs, ours):
            summary = f"`{plan.branch}` already has everything on `{plan.base}`."
            return RunResult(JobState.SUCCEEDED, Outcome.NO_CHANGES, result={"summary": summary})
        merge = merge_trees(clone, ours, theirs)
        why = gate(clone, ours, theirs, merge.conflicts) if gate is not None else None
        if why is not None:
            return RunResult(JobState.SUCCEEDED, Outcome.NO_CHANGES, result={"summary": why})
        title = f"Merge branch '{plan.base}' into {plan.branch}"
        if not merge.conflicts:
            return _push_clean(clone, plan, merge.tree, (ours, theirs), title, author, git_env, bot)
        resolver = _Resolution(plan, git_env, author, (ours, theirs), merge.conflicts, title, bot)
        # The conflicted merge is the agent's starting point (never pushed as it is).
        start = commit_merge(clone, merge.tree, (ours, theirs), title, bot)
        detach_head(clone, start)
        request = _request(ctx, snapshot, plan, git_env, merge.conflicts)
        done = run_in_clone(request, ctx, clone, after=resolver.after)
    return resolver.result(done)


def _push_clean(
    clone: git_repo.Clone,
    plan: Plan,
    tree: str,
    parents: tuple[str, str],
    title: str,
    author: tuple[str, str],
    git_env: dict[str, str],
    bot: tuple[str, str],
) -> RunResult:
    """Commit git's own clean merge as the bot and push it; the branch's files for the
    pull request's description, as a follow-up's are."""
    summary = f"Merged `{plan.base}` into `{plan.branch}`; git found no conflicts."
    message = build_commit_message(title, summary, *author)
    sha = commit_merge(clone, tree, parents, message, bot)
    git_repo.push(clone, sha, plan.branch, force=False, auth=git_env)
    files = branch_files(clone, plan.base, sha, None)
    result: JsonObject = {
        "summary": summary,
        "changed": True,
        "files": [list(entry) for entry in files[:MAX_FILES_LISTED]],
        "files_total": len(files),
    }
    return RunResult(JobState.SUCCEEDED, Outcome.CHANGED_CODE, result=result)


class _Resolution:
    """The after-agent hook of a conflicted merge, and how the job ends."""

    def __init__(
        self,
        plan: Plan,
        git_env: dict[str, str],
        author: tuple[str, str],
        parents: tuple[str, str],
        conflicts: tuple[str, ...],
        title: str,
        bot: tuple[str, str],
    ) -> None:
        self.plan, self.git_env, self.author, self.bot = plan, git_env, author, bot
        self.parents, self.conflicts, self.title = parents, conflicts, title
        self.left: list[str] = list(conflicts)
        self.pushed = False

    def after(self, work: Work, agent: AgentResult) -> None:
        """Push the resolved merge; only a tree with no markers left in the conflicted files."""
        if agent.outcome != "changed_code" or work.tree is None:
            return
        self.left = with_markers(work.clone, work.tree, self.conflicts)
        if self.left:
            return
        message = build_commit_message(self.title, agent.summary, *self.author)
        sha = commit_merge(work.clone, work.tree, self.parents, message, self.bot)
        git_repo.push(work.clone, sha, self.plan.branch, force=False, auth=self.git_env)
        self.pushed = True

    def result(self, done: SessionResult) -> RunResult:
        ended = run_result(
            done.agent, done.diff, done.notes, done.egress, done.verification, done.files
        )
        if self.pushed or ended.state == JobState.CANCELLED:
            return ended
        left = Unresolved(self.plan.base, self.plan.branch, self.parents[1], tuple(self.left))
        why = f" The agent said: {done.agent.summary}" if done.agent.summary else ""
        error = f"{render_unresolved(left)}{why}"
        result: JsonObject = {
            **ended.result,
            "conflicts": list(self.left),
            UNRESOLVED_KEY: left.as_context(),
        }
        return RunResult(JobState.FAILED, Outcome.COULD_NOT, error=error, result=result)


def _request(
    ctx: JobContext,
    snapshot: Snapshot,
    plan: Plan,
    git_env: dict[str, str],
    conflicts: tuple[str, ...],
) -> SessionRequest:
    trigger = snapshot.trigger
    context = TaskContext(
        kind=f"{snapshot.source}_pull_request",
        title=trigger.title,
        url=trigger.url,
    )
    return SessionRequest(
        job_id=ctx.job_id,
        repo=plan.repo.clone_url,
        instruction=build_resolve_instruction(plan.base, plan.branch, conflicts),
        context=context,
        branch=plan.branch,
        pull_base=plan.base,
        requester=snapshot.requester,
        git_env=git_env,
        secrets=tuple(v for k, v in git_env.items() if k.startswith("GIT_CONFIG_VALUE")),
    )


def build_resolve_instruction(base: str, branch: str, conflicts: tuple[str, ...]) -> str:
    """What the agent is asked to do with a conflicted merge: resolve it, check it, finish.
    The files are in its work tree, and it reads them there (their text is repository data,
    never part of the instruction)."""
    names = "\n".join(f"- {path}" for path in conflicts[: MAX_FILES_NAMED * 5])
    return (
        f"Merging `{base}` into this pull request's branch `{branch}` stopped on conflicts. "
        "The work tree holds the merge, and these files have git's conflict markers "
        f"(<<<<<<< / ======= / >>>>>>>):\n{names}\n\n"
        "Resolve every conflict so that both sides' intent is kept, remove all the markers, "
        "change nothing else, run the tests, and finish with changed_code. If a conflict "
        "cannot be resolved safely, finish with could_not and say why."
    )


def bot_from(settings: Settings) -> tuple[str, str]:
    """The bot's git identity (name, email), which its merge commits carry."""
    return bot_identity(settings.bot_name)
