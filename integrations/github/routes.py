"""GitHub events we act on, the ones we deliberately ignore, and their handlers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from integrations.github.events import (
    CheckOutput,
    CheckRunEvent,
    Envelope,
    IssueAssignEvent,
    IssueCommentEvent,
    IssueLabelEvent,
    PushEvent,
    ReviewCommentEvent,
    ReviewEvent,
)
from integrations.github.events import PullRequest as PullRequestPayload
from integrations.github.review_routes import REVIEW_ROUTES
from integrations.github.trigger import ISSUE_COMMENT, REVIEW_COMMENT
from resolver.contract.inbound import Policy, Route, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.pulls import touches_config
from resolver.contract.triggers import (
    BOT_BRANCH_PREFIX,
    BasePush,
    BasePushed,
    CiFailure,
    FailedCheck,
    ForgeIssue,
    JsonObject,
    OnForge,
    PullRequest,
    Repository,
    ReviewBatch,
)
from resolver.features.ci.contract import FAILED_CONCLUSIONS, build_fix_task

MAX_PUSH_COMMITS: Final = 2048
"""https://docs.github.com/webhooks/webhook-events-and-payloads#push: `commits` holds at most
2048 of the pushed commits."""
REVIEW_TASK: Final = "Address the review: every open review thread on this pull request."
# A review that asks for something; an approval asks for nothing unless it mentions the bot.
ASKING_REVIEWS: Final = frozenset({"commented", "changes_requested"})


def on_comment_created(event: IssueCommentEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a comment on an issue or a pull request."""
    request = mentions(event.comment.body, policy.bot_name)
    if request is None:
        return None
    issue = event.issue
    kind = PullRequest if issue.pull_request is not None else ForgeIssue
    subject = kind(
        **_on_forge(event, issue.number, issue.title, issue.body),
        url=event.comment.html_url,
        comment_id=event.comment.id,
        part={"comment_kind": ISSUE_COMMENT},
    )
    return _trigger(event, subject, request)


def on_review_comment_created(event: ReviewCommentEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a comment on a line of a pull request's diff."""
    request = mentions(event.comment.body, policy.bot_name)
    if request is None:
        return None
    comment = event.comment
    part: JsonObject = {
        "comment_kind": REVIEW_COMMENT,
        "review_id": comment.pull_request_review_id,
        "in_reply_to_id": comment.in_reply_to_id,
        "path": comment.path,
        "line": comment.line,
        "start_line": comment.start_line,
        "side": comment.side,
        "diff_hunk": comment.diff_hunk,
        "commit_id": comment.commit_id,
    }
    fields = _on_pull(event, event.pull_request)
    fields.update(url=comment.html_url, comment_id=comment.id, part=part)
    return _as_review(event, fields, request, comment.pull_request_review_id)


def on_review_submitted(event: ReviewEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in the body of a submitted review, or any review that asks for changes on a
    pull request the bot opened: one job for all of its open threads."""
    review = event.review
    request = mentions(review.body, policy.bot_name)
    if request is None and _asks_the_bot(event, policy):
        request = REVIEW_TASK
    if request is None:
        return None
    part: JsonObject = {"comment_kind": "review", "review_state": review.state}
    fields = _on_pull(event, event.pull_request)
    fields.update(url=review.html_url, part=part)
    return _as_review(event, fields, request, review.id)


def _asks_the_bot(event: ReviewEvent, policy: Policy) -> bool:
    """A commenting or change-requesting review, by someone else, of the bot's own PR."""
    author = event.pull_request.user
    return (
        (event.review.state or "").lower() in ASKING_REVIEWS
        and author is not None
        and policy.is_bot_login(author.login)
        and not policy.is_bot_login(event.sender.login)
    )


def _as_review(
    event: Envelope, fields: dict[str, Any], request: str, review_id: int | None
) -> Trigger:
    """A trigger from a review: its job takes every open thread, and every delivery of the same
    review (its body, each of its comments) is that one job."""
    if review_id is None:
        return _trigger(event, PullRequest(**fields), request)
    once = f"review:{event.repository.full_name}:{review_id}"
    subject = ReviewBatch(**fields, review_id=review_id)
    return replace(_trigger(event, subject, request), once_key=once)


def on_issue_labeled(event: IssueLabelEvent, policy: Policy) -> Trigger | None:
    """The trigger label was added to an issue: the issue itself is the task."""
    if event.label is None or not policy.is_trigger_label(event.label.name):
        return None
    issue = event.issue
    kind = PullRequest if issue.pull_request is not None else ForgeIssue
    fields = _on_forge(event, issue.number, issue.title, issue.body)
    subject = kind(**fields, url=issue.html_url, label=event.label.name)
    return _trigger(event, subject, None)


def on_issue_assigned(event: IssueAssignEvent, policy: Policy) -> Trigger | None:
    """The issue was assigned to the bot's account: the issue itself is the task."""
    if event.assignee is None or not policy.is_bot_login(event.assignee.login):
        return None
    issue = event.issue
    kind = PullRequest if issue.pull_request is not None else ForgeIssue
    fields = _on_forge(event, issue.number, issue.title, issue.body)
    subject = kind(**fields, url=issue.html_url, assignee=event.assignee.login)
    return _trigger(event, subject, None)


def on_check_run_completed(event: CheckRunEvent, policy: Policy) -> Trigger | None:
    """A red check on the head of a pull request from one of the bot's branches. Whether the
    repository opted in, and the bounds of the loop, are the worker's to check."""
    run = event.check_run
    if run.conclusion not in FAILED_CONCLUSIONS:
        return None
    pull = next((p for p in run.pull_requests if _is_bot_head(p, run.head_sha)), None)
    if pull is None or pull.head is None:
        return None
    output = run.output or CheckOutput()
    check = FailedCheck(
        name=run.name,
        head_sha=run.head_sha,
        branch=pull.head.ref,
        conclusion=run.conclusion or "failure",
        url=run.html_url,
        check_id=run.id,
        title=output.title,
        summary=output.summary,
    )
    subject = CiFailure(
        **_on_forge(event, pull.number, f"Fix the failing check {run.name}", None),
        url=run.html_url,
        head_ref=pull.head.ref,
        head_sha=run.head_sha,
        base_ref=pull.base.ref if pull.base else None,
        check=check,
        part={"check_app": run.app.slug if run.app else None},
    )
    trigger = _trigger(event, subject, build_fix_task(check))
    return replace(trigger, ci_branch=pull.head.ref)


def on_push(event: PushEvent, policy: Policy) -> Trigger | None:
    """A push to the repository's default branch: the bot's pull requests on it may no longer
    merge cleanly. Whether the repository opted in (`conflicts: fix`) is the worker's to check;
    any other push (a branch, a tag, a deletion) is nothing, before any call to GitHub."""
    repo = event.repository
    branch = repo.default_branch
    if event.deleted or not branch or event.ref != f"refs/heads/{branch}":
        return None
    subject = BasePushed(
        repo=_repository(event),
        reach=_reach(event),
        url=repo.html_url,
        push=BasePush(branch=branch, sha=event.after, config_touched=_touches_config(event)),
    )
    return Trigger(
        task=f"Update my pull requests on `{branch}` that no longer merge cleanly.",
        sender=event.sender.as_sender(),
        conversation_key=f"github:{repo.full_name}@{branch}",
        repo=repo.full_name,
        subject=subject,
        bot_branches=True,
    )


def _touches_config(event: PushEvent) -> bool | None:
    """Whether the push changed `.resolver/config.yml`; None when its list of commits may be
    cut short (GitHub lists at most MAX_PUSH_COMMITS) or is missing."""
    commits = event.commits
    if commits is None:
        return None
    changed = [(*c.added, *c.modified, *c.removed) for c in commits]
    return touches_config(changed, len(commits) < MAX_PUSH_COMMITS)


def _is_bot_head(pull: PullRequestPayload, sha: str) -> bool:
    head = pull.head
    return head is not None and head.sha == sha and head.ref.startswith(BOT_BRANCH_PREFIX)


def _repository(event: Envelope) -> Repository:
    repo = event.repository
    return Repository(
        full_name=repo.full_name, clone_url=repo.clone_url, default_branch=repo.default_branch
    )


def _reach(event: Envelope) -> JsonObject:
    return {"installation_id": event.installation.id if event.installation else None}


def _on_forge(event: Envelope, number: int, title: str, body: str | None) -> dict[str, Any]:
    """What every trigger on an issue or a pull request has."""
    return {
        "repo": _repository(event),
        "reach": _reach(event),
        "number": number,
        "title": title,
        "body": body or "",
    }


def _on_pull(event: Envelope, pull: PullRequestPayload) -> dict[str, Any]:
    return {
        **_on_forge(event, pull.number, pull.title, pull.body),
        "head_ref": pull.head.ref if pull.head else None,
        "head_sha": pull.head.sha if pull.head else None,
        "base_ref": pull.base.ref if pull.base else None,
    }


def _trigger(event: Envelope, subject: OnForge, request: str | None) -> Trigger:
    """The job request; without a request text, the issue or PR itself is the task."""
    repo = event.repository
    title, body = subject.title or "", subject.body or ""
    return Trigger(
        task=request or f"{title}\n\n{body}".strip(),
        sender=event.sender.as_sender(),
        conversation_key=f"github:{repo.full_name}#{subject.number}",
        repo=repo.full_name,
        subject=subject,
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "issue_comment.created": Route(IssueCommentEvent, on_comment_created),
    "pull_request_review_comment.created": Route(ReviewCommentEvent, on_review_comment_created),
    "pull_request_review.submitted": Route(ReviewEvent, on_review_submitted),
    "issues.labeled": Route(IssueLabelEvent, on_issue_labeled),
    "issues.assigned": Route(IssueAssignEvent, on_issue_assigned),
    "check_run.completed": Route(CheckRunEvent, on_check_run_completed),
    "push": Route(PushEvent, on_push),
    **REVIEW_ROUTES,  # auto-reviews (review_routes.py)
}

IGNORED: Final = frozenset(
    {
        "ping",
        "issue_comment.edited",
        "issue_comment.deleted",
        "pull_request_review_comment.edited",
        "pull_request_review_comment.deleted",
        "pull_request_review.edited",
        "pull_request_review.dismissed",
        "issues.opened",
        "issues.edited",
        "issues.closed",
        "issues.reopened",
        "issues.deleted",
        "issues.transferred",
        "issues.unlabeled",
        "issues.unassigned",
        "issues.milestoned",
        "issues.demilestoned",
        "issues.locked",
        "issues.unlocked",
        "issues.pinned",
        "issues.unpinned",
        "pull_request.edited",
        "pull_request.closed",
        "pull_request.reopened",
        "pull_request.labeled",
        "pull_request.unlabeled",
        "pull_request.assigned",
        "pull_request.unassigned",
        "pull_request.converted_to_draft",
        "pull_request.review_requested",
        "pull_request.review_request_removed",
        "installation.created",
        "installation.deleted",
        "installation_repositories.added",
        "installation_repositories.removed",
        "check_run.created",
        "check_run.rerequested",
        "check_run.requested_action",
        "check_suite.completed",
        "check_suite.requested",
        "check_suite.rerequested",
        "workflow_run.requested",
        "workflow_run.in_progress",
        "workflow_run.completed",
        "workflow_job.queued",
        "workflow_job.in_progress",
        "workflow_job.completed",
        "workflow_job.waiting",
    }
)
