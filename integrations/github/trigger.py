"""GitHub's own part of a job's trigger (`TaskTrigger.part` and `.reach`): what only GitHub's
side reads, decoded from the stored JSON here."""

from __future__ import annotations

from typing import Final

from resolver.contract.inbound import VendorModel
from resolver.contract.triggers import TaskTrigger

REVIEW_COMMENT: Final = "review_comment"
ISSUE_COMMENT: Final = "issue_comment"


class GitHubPart(VendorModel):
    """Where in the issue or pull request the trigger was, and which app reported a check."""

    comment_kind: str | None = None
    """`issue_comment`, `review_comment` or `review`: where the comment that asked is."""
    in_reply_to_id: int | None = None
    """The first comment of the review thread the comment that asked answered."""
    check_app: str | None = None


class GitHubReach(VendorModel):
    installation_id: int | None = None
    """The App installation the event came through (its token acts for the job)."""


def part_of(trigger: TaskTrigger) -> GitHubPart:
    return GitHubPart.model_validate(trigger.part)


def installation_of(trigger: TaskTrigger) -> int | None:
    return GitHubReach.model_validate(trigger.reach).installation_id
