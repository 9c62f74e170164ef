"""Jira events we act on, the ones we deliberately ignore, and their handlers."""

from __future__ import annotations

from typing import Any, Final

from integrations.jira.events import CommentEvent, Issue, IssueEvent, User
from integrations.jira.markup import comment_text
from resolver.contract.inbound import Policy, Route, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.triggers import JsonObject, TrackerTicket


def on_comment_created(event: CommentEvent, policy: Policy) -> Trigger | None:
    """A new comment mentioning the bot: `@bot`, or its account in wiki markup or ADF."""
    request = mentions(comment_text(event.comment.body, policy), policy.bot_name)
    if request is None:
        return None
    author = event.comment.author or event.user
    return _trigger(author, event.issue, request, policy, comment_id=str(event.comment.id))


def on_issue_updated(event: IssueEvent, policy: Policy) -> Trigger | None:
    """The trigger label was newly added (the changelog shows it in `to`, not in `from`)."""
    items = event.changelog.items if event.changelog else None
    for item in items or []:
        if "labels" not in (item.field, item.fieldId):
            continue
        before = (item.fromString or "").split()
        after = (item.toString or "").split()
        added = [label for label in after if policy.is_trigger_label(label)]
        if added and not any(policy.is_trigger_label(label) for label in before):
            return _trigger(event.user, event.issue, None, policy, label=added[0])
    return None


def on_issue_created(event: IssueEvent, policy: Policy) -> Trigger | None:
    """An issue created with the trigger label already on it."""
    fields = event.issue.fields
    labels = (fields.labels if fields else None) or []
    added = [label for label in labels if policy.is_trigger_label(label)]
    return _trigger(event.user, event.issue, None, policy, label=added[0]) if added else None


def _trigger(
    user: User | None,
    issue: Issue,
    request: str | None,
    policy: Policy,
    *,
    comment_id: str | None = None,
    label: str | None = None,
) -> Trigger | None:
    sender = user.as_sender() if user else None
    if sender is None:
        return None
    fields = issue.fields
    title = (fields.summary if fields else None) or ""
    description = comment_text(fields.description if fields else None, policy)
    site = issue.site()
    part: JsonObject = {
        "issue_key": issue.key,
        "issue_id": None if issue.id is None else str(issue.id),
        "project_key": fields.project.key if fields and fields.project else None,
        "sender_name": user.displayName if user else None,
        "comment_id": comment_id,
    }
    subject = TrackerTicket(
        key=issue.key,
        title=title,
        body=description,
        url=f"{site}/browse/{issue.key}" if site else None,
        label=label,
        part=part,
        reach={"site": site},
    )
    host = site.split("://", 1)[-1] if site else "jira"
    return Trigger(
        task=request or f"{title}\n\n{description}".strip(),
        sender=sender,
        conversation_key=f"jira:{host}:{issue.key}",
        subject=subject,
    )


ROUTES: Final[dict[str, Route[Any]]] = {
    "comment_created": Route(CommentEvent, on_comment_created),
    "jira:issue_updated": Route(IssueEvent, on_issue_updated),
    "jira:issue_created": Route(IssueEvent, on_issue_created),
}

IGNORED: Final = frozenset(
    {
        "comment_updated",
        "comment_deleted",
        "jira:issue_deleted",
        "worklog_created",
        "worklog_updated",
        "worklog_deleted",
        "issuelink_created",
        "issuelink_deleted",
        "attachment_created",
        "attachment_deleted",
        "project_created",
        "project_updated",
        "project_deleted",
        "sprint_created",
        "sprint_started",
        "sprint_closed",
        "board_created",
        "board_updated",
        "user_created",
        "user_updated",
        "jira:version_released",
    }
)
