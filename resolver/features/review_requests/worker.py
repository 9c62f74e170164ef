"""A review job (`ReviewRequest`): the pull request's head in the sandbox, its diff against its
base in the prompt, and the reviewer's tools (`agent.review_tools`). Afterwards the host reads
the comments back from the trajectory, keeps each one whose line is in the diff it computed
itself, and puts the rest in the summary; `review_requests.callbacks` posts the review. A
review job never pushes.

An auto-review (`review: {auto: true}`) runs quietly when there is nothing to do, and reviews
only what changed since its last review of the same pull request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from integrations import registry
from resolver.agent import git as git_repo
from resolver.agent.events import Kind
from resolver.agent.request import SessionRequest
from resolver.agent.result import run_result
from resolver.agent.session import SessionResult, run_in_clone
from resolver.agent.task import TaskContext
from resolver.agent.trajectory import latest_attempt
from resolver.callbacks.proof import render_verification
from resolver.contract import outbound as providers
from resolver.contract.errors import CallbackError
from resolver.contract.outbound import Comment
from resolver.contract.results import read_result
from resolver.contract.review import FileDiff, diff_files
from resolver.contract.triggers import ReviewRequest, number_of, read_trigger
from resolver.core.job import JobContext, RunResult
from resolver.core.states import JobState, Outcome
from resolver.features.ci.contract import QUIET
from resolver.features.review_requests.contract import (
    RESULT_KEY,
    ReviewConfig,
    ReviewConfigError,
    ReviewResult,
    parse_review_config,
    place,
    read_review,
    remarks_of,
    render_summary,
    reviewed_files,
    verdict_of,
)
from resolver.store import conversations, jobs
from resolver.store.db import session_scope
from resolver.worker.branches import BRANCH_PREFIX
from resolver.worker.plan import prepare
from resolver.worker.request import quiet_end, record_plan, requested_model
from resolver.worker.values import ENDING_ERRORS, Plan, Snapshot, Stop, ended_by

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

DIFF_NOTE: Final = "the host (the pull request's diff against its base)"


class _Quiet(Exception):
    """An auto-review with nothing to do: it ends without a word in the pull request."""


def run_review(session: Session, ctx: JobContext, snapshot: Snapshot) -> RunResult:
    """Review the pull request the trigger names, and keep the review for its callback.
    `session` is the run's."""
    auto = _is_auto(snapshot)
    try:
        _, model = requested_model(snapshot.task, ctx.settings)
        plan, _, git_env = prepare(session, snapshot, _plan, ctx.settings)
    except _Quiet as quiet:
        return quiet_end(snapshot, str(quiet))
    except Stop as stop:
        # An auto-review nobody asked for says nothing of why it did not run (the job says).
        return quiet_end(snapshot, str(stop)) if auto else ended_by(stop)
    except CallbackError as error:
        return RunResult(JobState.FAILED, Outcome.ERROR, error=f"I could not prepare this: {error}")
    if not auto:
        record_plan(session, ctx.job_id, plan)
    try:
        return _review(ctx, snapshot, plan, git_env, model)
    except _Quiet as quiet:
        return quiet_end(snapshot, str(quiet))
    except Stop as stop:
        return quiet_end(snapshot, str(stop)) if auto else ended_by(stop)
    except ENDING_ERRORS as error:
        return ended_by(error)


def _is_auto(snapshot: Snapshot) -> bool:
    trigger = snapshot.trigger
    return isinstance(trigger, ReviewRequest) and trigger.auto


def _plan(
    snapshot: Snapshot, forge: providers.Forge, forge_name: str, repo: providers.RepoInfo
) -> Plan:
    """The pull request's head, checked out; its base. Never a branch to push."""
    number = number_of(snapshot.trigger)
    if snapshot.source != forge_name or number is None:
        raise Stop(Outcome.COULD_NOT, "I review pull requests: ask me on one.")
    pull = forge.get_pull(repo.full_name, number)
    if _is_auto(snapshot) and pull.head.startswith(BRANCH_PREFIX):
        raise _Quiet("the bot does not review its own pull requests")
    base = pull.base or repo.default_branch
    # A fork's head is no branch of this repository: fetched from where the forge keeps it.
    checkout = pull.fetch_ref or pull.head
    return Plan(
        forge_name,
        repo,
        base,
        pull.head,
        checkout=checkout,
        pr_url=pull.url,
        fetch_from=pull.fetch_from,
        fetch_commit=pull.fetch_commit,
    )


def _review(
    ctx: JobContext, snapshot: Snapshot, plan: Plan, git_env: dict[str, str], model: str | None
) -> RunResult:
    root = ctx.settings.sandbox_workspace_root
    forked = plan.checkout is not None and plan.checkout.startswith("refs/")
    branch = None if forked else plan.checkout
    with git_repo.private_clone(plan.repo.clone_url, root, branch, git_env) as clone:
        if forked and plan.checkout is not None:
            source, commit = plan.fetch_from, plan.fetch_commit
            auth = git_env if source is None else _fork_env(ctx, snapshot, plan.forge_name, source)
            git_repo.detach_at(clone, plan.checkout, auth, source=source, commit=commit)
        head = git_repo.head(clone)
        start = git_repo.git(clone, "rev-parse", "--verify", f"origin/{plan.base}^{{commit}}")
        start = start.strip()
        base = git_repo.merge_base(clone, start, head) or start
        config = _config(clone)
        since = _since(ctx.job_id, snapshot, clone, head)
        patch = git_repo.diff(clone, base, head)
        files = reviewed_files(diff_files(patch), config)
        newer = git_repo.diff(clone, since, head) if since else None
        allowed = reviewed_files(diff_files(newer), config) if newer is not None else None
        _check_auto(snapshot, config, files, allowed)
        if _is_auto(snapshot):
            _keep_quiet(ctx.job_id)
        shown = newer if newer is not None else patch
        request = _request(ctx, snapshot, plan, git_env, model, (base, head, since), shown)
        done = run_in_clone(request, ctx, clone)
    review = _built(ctx.job_id, done, files, allowed, (head, base, start, since))
    return _result(done, review, _is_auto(snapshot))


def _fork_env(ctx: JobContext, snapshot: Snapshot, forge_name: str, url: str) -> dict[str, str]:
    """The forge's git environment for the fork the head is fetched from (its token goes to
    that repository on the forge's host only, for the fetch; never to the sandbox)."""
    forge = registry.forge(forge_name, snapshot.trigger, snapshot.requester_id, ctx.settings)
    return forge.git_env(url)


def _keep_quiet(job_id: int) -> None:
    """An auto-review's review is its only message: no status message while it runs."""
    with session_scope() as session:
        jobs.note_result(jobs.get_job(session, job_id), {QUIET: True})


def _config(clone: git_repo.Clone) -> ReviewConfig:
    try:
        return parse_review_config(git_repo.repo_config(clone, git_repo.default_ref(clone)))
    except ReviewConfigError as error:
        raise Stop(Outcome.COULD_NOT, f"I cannot review this: {error}") from None


def _since(job_id: int, snapshot: Snapshot, clone: git_repo.Clone, head: str) -> str | None:
    """For an auto-review, the head its last review of this pull request saw, when the new head
    still has it (a force-push starts over); None: review all of it."""
    if not _is_auto(snapshot):
        return None
    with session_scope() as session:
        earlier = conversations.earlier_in_conversation(session, job_id)
        # The reviews that count: each posted one, and each a person stopped (not the ones that
        # ended quietly with nothing to do, which would otherwise resume them, nor one the forge
        # never took, whose job failed: its head is reviewed again).
        seen = [
            (job.state == JobState.CANCELLED, _reviewed_head(job.result))
            for job in earlier
            if isinstance(read_trigger(job.trigger), ReviewRequest) and job.state != JobState.FAILED
        ]
    counted = [(stopped, sha) for stopped, sha in seen if stopped or sha]
    if counted and counted[0][0]:
        raise _Quiet("a person stopped the last review; `@bot review again` resumes them")
    last = counted[0][1] if counted else None
    if last is None:
        return None
    if last == head:
        raise _Quiet("nothing changed since the last review")
    return last if git_repo.is_ancestor(clone, last, head) else None


def _reviewed_head(result: Mapping[str, object] | None) -> str | None:
    review = read_review(read_result(result).review)
    return review.head_sha if review is not None else None


def _check_auto(
    snapshot: Snapshot,
    config: ReviewConfig,
    files: Mapping[str, FileDiff],
    allowed: Mapping[str, FileDiff] | None,
) -> None:
    """Whether an auto-review goes on: the repository asked for it, and there is something of
    its choosing to review."""
    trigger = snapshot.trigger
    if not isinstance(trigger, ReviewRequest) or not trigger.auto:
        return
    if not config.auto:
        raise _Quiet("`review: {auto: true}` is not set in .resolver/config.yml")
    if trigger.draft and config.skip_drafts:
        raise _Quiet("the pull request is a draft")
    if not files or allowed == {}:
        raise _Quiet("no file the repository reviews has changed")
    if len(files) > config.max_files:
        raise _Quiet(f"{len(files)} files changed, more than review.max_files")


def _request(
    ctx: JobContext,
    snapshot: Snapshot,
    plan: Plan,
    git_env: dict[str, str],
    model: str | None,
    shas: tuple[str, str, str | None],
    patch: str,
) -> SessionRequest:
    base, head, since = shas
    number = number_of(snapshot.trigger)
    word = registry.get(plan.forge_name).pull_word
    where = f"Review {word} #{number}: `{plan.branch}` into `{plan.base}`."
    how = f"Its whole diff: `git diff {base} {head}`."
    if since:
        how += f" Comment only on what changed since the last review: `git diff {since} {head}`."
    trigger = snapshot.trigger
    return SessionRequest(
        job_id=ctx.job_id,
        repo=plan.repo.clone_url,
        instruction=f"{where} {how}",
        model=model,
        context=TaskContext(
            kind=f"{snapshot.source}_pull_request",
            title=trigger.title,
            body=trigger.body,
            url=trigger.url,
            comments=(Comment(DIFF_NOTE, patch),),
        ),
        branch=plan.checkout,
        requester=snapshot.requester,
        git_env=git_env,
        secrets=tuple(v for k, v in git_env.items() if k.startswith("GIT_CONFIG_VALUE")),
        review=True,
    )


def _built(
    job_id: int,
    done: SessionResult,
    files: Mapping[str, FileDiff],
    allowed: Mapping[str, FileDiff] | None,
    shas: tuple[str, str, str, str | None],
) -> ReviewResult | None:
    """The review from the trajectory's `comment` calls and the `finish` verdict; None when
    the agent did not finish its review."""
    if done.agent.outcome != "answered":
        return None
    comments, verdict = _recorded(job_id)
    placed, outside = place(remarks_of(comments), files, allowed)
    head, base, start, since = shas
    verification = render_verification(done.verification) if done.verification else ""
    summary = render_summary(done.agent.summary, verdict_of(verdict), outside, verification, since)
    excerpts = tuple(tuple(files[c.path].excerpt(c.line, c.side)) for c in placed)
    return ReviewResult(summary, verdict_of(verdict), placed, head, base, start, since, excerpts)


def _recorded(job_id: int) -> tuple[list[Mapping[str, Any]], object]:
    comments: list[Mapping[str, Any]] = []
    verdict: object = None
    with session_scope() as session:
        events = latest_attempt(session, job_id)
    for event in events:
        if event.kind != Kind.OBSERVATION or event.payload.get("error"):
            continue
        found = event.payload.get("review_comment")
        if isinstance(found, Mapping):
            comments.append(found)
        verdict = event.payload.get("verdict", verdict)
    return comments, verdict


def _result(done: SessionResult, review: ReviewResult | None, auto: bool) -> RunResult:
    ran = run_result(done.agent, "", done.notes, done.egress, done.verification)
    if review is None:
        return ran
    count = len(review.comments)
    said = "requested changes" if review.verdict == "request_changes" else "commented"
    summary = f"I reviewed the change and {said}, with {count} comment(s) on its lines."
    result = {**ran.result, "summary": summary, RESULT_KEY: review.as_dict()}
    if auto:
        result[QUIET] = True  # the review is its message: no status message beside it
    return RunResult(ran.state, ran.outcome, error=ran.error, result=result)
