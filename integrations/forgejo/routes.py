"""Forgejo events we act on, the ones we deliberately ignore, and their handlers.

Two quirks shape them. An `issue_label` or `issue_assign` delivery carries the issue as it is
after the change, not what changed: the trigger label (or the bot among the assignees) may have
been there before. So each issue starts at most one such job (`once_key`); a mention starts
more. And every hook gets its own delivery id, so a repository hook and an organisation hook on
the same event would be two deliveries: a comment or a push is keyed by itself instead.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from integrations.forgejo.events import (
    Envelope,
    IssueCommentEvent,
    IssueEvent,
    PushEvent,
    ReviewEvent,
)
from integrations.forgejo.events import PullRequest as PullPayload
from integrations.forgejo.review_routes import REVIEW_ROUTES
from integrations.forgejo.trigger import ISSUE_COMMENT, REVIEW
from resolver.contract.inbound import Policy, Route, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.pulls import touches_config
from resolver.contract.triggers import (
    BasePush,
    BasePushed,
    ForgeIssue,
    JsonObject,
    OnForge,
    PullRequest,
    Repository,
    ReviewBatch,
)

NAME: Final = "forgejo"
REVIEW_TASK: Final = "Address the review: every open review thread on this pull request."
# The review types that ask for something; an approval asks nothing unless it mentions the bot.
ASKING_REVIEWS: Final = frozenset({"pull_request_review_comment", "pull_request_review_rejected"})
_DELETED: Final = "0" * 40  # `after` of a deleted branch


def on_comment_created(event: IssueCommentEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in a new comment on an issue or a pull request."""
    request = mentions(event.comment.body, policy.bot_name)
    if request is None:
        return None
    issue, comment = event.issue, event.comment
    fields = _on_forge(event, issue.number, issue.title, issue.body)
    fields.update(url=comment.html_url, comment_id=comment.id, part={"comment_kind": ISSUE_COMMENT})
    pull = event.pull_request
    subject: OnForge
    if pull is not None:
        subject = PullRequest(**fields, **_branches(pull))
    elif event.is_pull or issue.pull_request is not None:
        subject = PullRequest(**fields)
    else:
        subject = ForgeIssue(**fields)
    trigger = _trigger(event, subject, request)
    return replace(trigger, once_key=f"comment:{event.repository.full_name}:{comment.id}")


def on_review_submitted(event: ReviewEvent, policy: Policy) -> Trigger | None:
    """`@bot …` in the body of a submitted review, or a commenting or change-requesting review
    of a pull request the bot opened: one job for all of its open threads."""
    review = event.review
    request = mentions(review.content if review else None, policy.bot_name)
    if request is None and _asks_the_bot(event, policy):
        request = REVIEW_TASK
    if request is None:
        return None
    pull = event.pull_request
    part: JsonObject = {"comment_kind": REVIEW, "review_type": review.type if review else None}
    subject = ReviewBatch(
        **_on_forge(event, pull.number, pull.title, pull.body),
        **_branches(pull),
        url=pull.html_url,
        part=part,
    )
    return _trigger(event, subject, request)


def _asks_the_bot(event: ReviewEvent, policy: Policy) -> bool:
    author = event.pull_request.user
    kind = event.review.type if event.review else ""
    return (
        kind in ASKING_REVIEWS
        and author is not None
        and policy.is_bot_login(author.login)
        and not policy.is_bot_login(event.sender.login)
    )


def on_issue_labeled(event: IssueEvent, policy: Policy) -> Trigger | None:
    """The issue carries the trigger label after a label change: the issue itself is the task."""
    issue = event.issue
    label = next((x.name for x in issue.labels or [] if policy.is_trigger_label(x.name)), None)
    if label is None:
        return None
    trigger = _issue_trigger(event, label=label)
    return replace(trigger, once_key=f"label:{event.repository.full_name}#{issue.number}")


def on_issue_assigned(event: IssueEvent, policy: Policy) -> Trigger | None:
    """The bot's account is among the issue's assignees: the issue itself is the task."""
    issue = event.issue
    bot = next((u.login for u in issue.assignees or [] if policy.is_bot_login(u.login)), None)
    if bot is None:
        return None
    trigger = _issue_trigger(event, assignee=bot)
    return replace(trigger, once_key=f"assign:{event.repository.full_name}#{issue.number}")


def on_push(event: PushEvent, policy: Policy) -> Trigger | None:
    """A push to the repository's default branch: the bot's pull requests on it may no longer
    merge cleanly. Whether the repository opted in (`conflicts: fix`) is the worker's to check;
    any other push (a branch, a tag, a deletion) is nothing."""
    repo = event.repository
    branch = repo.default_branch
    if event.after == _DELETED or not branch or event.ref != f"refs/heads/{branch}":
        return None
    subject = BasePushed(
        repo=_repository(event),
        url=repo.html_url,
        push=BasePush(branch=branch, sha=event.after, config_touched=_touches_config(event)),
    )
    return Trigger(
        task=f"Update my pull requests on `{branch}` that no longer merge cleanly.",
        sender=event.sender.as_sender(),
        conversation_key=f"{NAME}:{repo.full_name}@{branch}",
        repo=repo.full_name,
        subject=subject,
        bot_branches=True,
        once_key=f"push:{repo.full_name}:{event.ref}:{event.after}",
    )


def _touches_config(event: PushEvent) -> bool | None:
    """Whether the push changed `.resolver/config.yml`: known only when the payload lists every
    pushed commit (`total_commits` of them)."""
    commits = event.commits
    if commits is None:
        return None
    changed = [(*c.added, *c.modified, *c.removed) for c in commits]
    return touches_config(changed, event.total_commits == len(commits))


def _repository(event: Envelope) -> Repository:
    repo = event.repository
    return Repository(
        full_name=repo.full_name, clone_url=repo.clone_url, default_branch=repo.default_branch
    )


def _on_forge(event: Envelope, number: int, title: str, body: str | None) -> dict[str, Any]:
    """What every trigger on an issue or a pull request has."""
    return {"repo": _repository(event), "number": number, "title": title, "body": body or ""}


def _branches(pull: PullPayload) -> dict[str, Any]:
    return {
        "head_ref": pull.head.ref if pull.head else None,
        "head_sha": pull.head.sha if pull.head else None,
        "base_ref": pull.base.ref if pull.base else None,
    }


def _issue_trigger(event: IssueEvent, **extra: str) -> Trigger:
    """A label or an assignment: on an issue, or on a pull request (Forgejo's issue events
    carry both; its branches are not in them)."""
    issue = event.issue
    kind = PullRequest if issue.pull_request is not None else ForgeIssue
    fields = _on_forge(event, issue.number, issue.title, issue.body)
    return _trigger(event, kind(**fields, url=issue.html_url, **extra), None)


def _trigger(event: Envelope, subject: OnForge, request: str | None) -> Trigger:
    """The job request; without a request text, the issue or pull request itself is the task."""
    repo = event.repository
    title, body = subject.title or "", subject.body or ""
    return Trigger(
        task=request or f"{title}\n\n{body}".strip(),
        sender=event.sender.as_sender(),
        conversation_key=f"{NAME}:{repo.full_name}#{subject.number}",
        repo=repo.full_name,
        subject=subject,
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "issue_comment.created": Route(IssueCommentEvent, on_comment_created),
    "pull_request_comment.created": Route(IssueCommentEvent, on_comment_created),
    "issue_label.label_updated": Route(IssueEvent, on_issue_labeled),
    "issue_assign.assigned": Route(IssueEvent, on_issue_assigned),
    "pull_request_review_comment.reviewed": Route(ReviewEvent, on_review_submitted),
    "pull_request_review_rejected.reviewed": Route(ReviewEvent, on_review_submitted),
    "pull_request_review_approved.reviewed": Route(ReviewEvent, on_review_submitted),
    "push": Route(PushEvent, on_push),
    **REVIEW_ROUTES,  # auto-reviews (review_routes.py)
}

# Event types and actions from Forgejo's modules/webhook/type.go and modules/structs/hook.go.
IGNORED: Final = frozenset(
    {
        "create",
        "delete",
        "fork",
        "issue_comment.edited",
        "issue_comment.deleted",
        "pull_request_comment.edited",
        "pull_request_comment.deleted",
        "issues.opened",
        "issues.edited",
        "issues.closed",
        "issues.reopened",
        "issue_assign.unassigned",
        "issue_label.label_cleared",
        "issue_milestone.milestoned",
        "issue_milestone.demilestoned",
        "pull_request.edited",
        "pull_request.closed",
        "pull_request_assign.assigned",
        "pull_request_assign.unassigned",
        "pull_request_label.label_updated",
        "pull_request_label.label_cleared",
        "pull_request_milestone.milestoned",
        "pull_request_milestone.demilestoned",
        "pull_request_review_request.review_requested",
        "pull_request_review_request.review_request_removed",
        "wiki.created",
        "wiki.edited",
        "wiki.deleted",
        "repository.created",
        "repository.deleted",
        "release.published",
        "release.updated",
        "release.deleted",
    }
)
