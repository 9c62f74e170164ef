"""Linear events we act on, the ones we deliberately ignore, and their handlers."""

from __future__ import annotations

import re
from typing import Any, Final

from integrations.linear.events import CommentEvent, Envelope, IssueEvent, Team
from resolver.contract.inbound import Policy, Route, Sender, Trigger
from resolver.contract.mentions import mentions
from resolver.contract.triggers import JsonObject, TrackerTicket


def on_comment_created(event: CommentEvent, policy: Policy) -> Trigger | None:
    """A new comment mentioning the bot, typed or as a link to its profile."""
    comment = event.data
    request = mentions(_profile_mentions(comment.body, policy.bot_name), policy.bot_name)
    fallback = comment.userId or (comment.user.id if comment.user else None)
    sender = event.actor_sender(fallback, bot=comment.botActor is not None)
    issue_id = comment.issueId or (comment.issue.id if comment.issue else None)
    if request is None or sender is None or issue_id is None:
        return None
    issue = comment.issue
    part: JsonObject = {
        "comment_id": comment.id,
        "parent_comment_id": comment.parentId,
        "issue_identifier": issue.identifier if issue else None,
        "team": _team(issue.team if issue else None, issue.teamId if issue else None),
    }
    subject = _ticket(event, issue_id, part, title=issue.title if issue else "", body="")
    subject = subject.model_copy(update={"url": comment.url or event.url})
    return _trigger(event, sender, subject, request)


def on_issue_updated(event: IssueEvent, policy: Policy) -> Trigger | None:
    """The trigger label was just added: `updatedFrom.labelIds` lacks it. Other edits of an
    already labelled issue carry no `labelIds` change and do not re-trigger."""
    before = (event.updatedFrom or {}).get("labelIds")
    if not isinstance(before, list):
        return None
    return _on_label(event, policy, previous=frozenset(str(i) for i in before))


def on_issue_created(event: IssueEvent, policy: Policy) -> Trigger | None:
    """An issue created with the trigger label."""
    return _on_label(event, policy, previous=frozenset())


def _on_label(event: IssueEvent, policy: Policy, previous: frozenset[str]) -> Trigger | None:
    issue = event.data
    labels = [label for label in issue.labels or [] if policy.is_trigger_label(label.name)]
    sender = event.actor_sender(None, bot=False)
    if not labels or any(label.id in previous for label in labels) or sender is None:
        return None
    part: JsonObject = {
        "issue_identifier": issue.identifier,
        "team": _team(issue.team, issue.teamId),
        "updated_at": issue.updatedAt,  # when the label was added: this trigger's own mark
    }
    subject = _ticket(event, issue.id, part, title=issue.title, body=issue.description or "")
    subject = subject.model_copy(update={"url": issue.url or event.url, "label": labels[0].name})
    task = f"{issue.title}\n\n{issue.description or ''}".strip()
    return _trigger(event, sender, subject, task)


def _ticket(
    event: Envelope, issue_id: str, part: JsonObject, *, title: str, body: str
) -> TrackerTicket:
    identifier = part.get("issue_identifier")
    return TrackerTicket(
        key=identifier if isinstance(identifier, str) and identifier else issue_id,
        title=title,
        body=body,
        part={"issue_id": issue_id, **part},
        reach={"organization_id": event.organizationId},
    )


def _trigger(event: Envelope, sender: Sender, subject: TrackerTicket, task: str) -> Trigger:
    issue_id = subject.part.get("issue_id")
    return Trigger(
        task=task or (subject.title or "").strip(),
        sender=sender,
        conversation_key=f"linear:{event.organizationId or ''}:{issue_id}",
        subject=subject,
    )


def _team(team: Team | None, team_id: str | None) -> JsonObject:
    return {"id": team.id if team else team_id, "key": team.key if team else None}


def _profile_mentions(body: str | None, bot_name: str) -> str:
    """Linear writes a mention as a link to the profile; spell the bot's as `@bot_name`."""
    name = re.escape(bot_name)
    profile = rf"https://linear\.app/[^/\s)]+/profiles/{name}(?![\w-])"
    text = re.sub(rf"\[[^\]]*\]\({profile}\)", f"@{bot_name}", body or "", flags=re.I)
    return re.sub(rf"(?<![(\w]){profile}", f"@{bot_name}", text, flags=re.I)


ROUTES: Final[dict[str, Route[Any]]] = {
    "Comment.create": Route(CommentEvent, on_comment_created),
    "Issue.update": Route(IssueEvent, on_issue_updated),
    "Issue.create": Route(IssueEvent, on_issue_created),
}

IGNORED: Final = frozenset(
    {
        "Comment.update",
        "Comment.remove",
        "Issue.remove",
        "IssueLabel.create",
        "IssueLabel.update",
        "IssueLabel.remove",
        "Reaction.create",
        "Reaction.remove",
        "Attachment.create",
        "Attachment.remove",
        "Project.create",
        "Project.update",
        "ProjectUpdate.create",
        "Cycle.create",
        "Cycle.update",
    }
)
