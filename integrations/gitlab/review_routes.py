"""GitLab's merge request events that start an auto-review (`review: {auto: true}` in the
project's `.resolver/config.yml`), as GitHub's do (`integrations/github/review_routes.py`): a
merge request opened or reopened, given new commits (an `update` with `oldrev`), or marked
ready (`changes.draft` from true to false). Whether the project opted in, and what changed
since the last review, are the worker's to check; here only what the event itself rules out:
the bot's own merge requests.

GitLab sends all of these, and label changes, as one `Merge Request Hook`: `routes.py` tries
the trigger label first (a person's request) and then this.
https://docs.gitlab.com/user/project/integrations/webhook_events/#merge-request-events
"""

from __future__ import annotations

from typing import Final

from integrations.gitlab.events import Changes, Noteable, WorkItemEvent
from resolver.contract.inbound import Policy, Sender, Trigger, VendorModel, auto_review
from resolver.contract.triggers import BOT_BRANCH_PREFIX, Repository, ReviewRequest

AUTO_REVIEW_TASK: Final = "Review this merge request."
_OPENED: Final = frozenset({"open", "reopen"})


class Commit(VendorModel):
    id: str


class ReviewedMergeRequest(Noteable):
    action: str | None = None
    author_id: int | None = None
    draft: bool = False
    oldrev: str | None = None  # set on an `update` that brought new commits
    last_commit: Commit | None = None


class DraftChange(VendorModel):
    previous: bool | None = None
    current: bool | None = None


class ReviewedChanges(Changes):
    draft: DraftChange | None = None


class MergeRequestEvent(WorkItemEvent):
    """A `Merge Request Hook` with what an auto-review reads."""

    object_attributes: ReviewedMergeRequest
    changes: ReviewedChanges | None = None


def on_merge_request_changed(event: MergeRequestEvent, policy: Policy) -> Trigger | None:
    """An auto-review of someone's merge request at its new head, for its author."""
    item, project = event.object_attributes, event.project
    head = item.last_commit.id if item.last_commit else None
    if head is None or item.author_id is None or not _starts_review(event):
        return None
    if (item.source_branch or "").startswith(BOT_BRANCH_PREFIX):
        return None
    author = _author(event)
    if policy.is_bot_login(author.login) or author.external_id in policy.bot_account_ids:
        return None
    subject = ReviewRequest(
        repo=Repository(
            full_name=project.path_with_namespace,
            clone_url=project.git_http_url,
            default_branch=project.default_branch,
        ),
        reach={"project_id": project.id},
        part={"web_url": project.web_url},
        number=item.iid,
        title=item.title,
        body=item.description or "",
        url=item.url,
        head_ref=item.source_branch,
        head_sha=head,
        base_ref=item.target_branch,
        auto=True,
        draft=item.draft,
    )
    conversation = f"gitlab:{project.path_with_namespace}!{item.iid}"
    return auto_review(subject, author, conversation, AUTO_REVIEW_TASK)


def _starts_review(event: MergeRequestEvent) -> bool:
    item = event.object_attributes
    if item.action in _OPENED:
        return True
    if item.action != "update":
        return False
    draft = event.changes.draft if event.changes else None
    marked_ready = draft is not None and draft.previous is True and draft.current is False
    return item.oldrev is not None or marked_ready


def _author(event: MergeRequestEvent) -> Sender:
    """The merge request's author: the hook's `user` is whoever acted (a pusher, a reviewer
    marking it ready), and names the author only when they are the same."""
    author_id = event.object_attributes.author_id
    if event.user.id == author_id:
        return event.user.as_sender()
    return Sender(external_id=str(author_id))
