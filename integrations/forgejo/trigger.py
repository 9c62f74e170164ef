"""Forgejo's own part of a job's trigger (`TaskTrigger.part`): what only Forgejo's side reads,
decoded from the stored JSON here. Its `reach` stays empty: Resolver talks to the one
configured instance (`RESOLVER_FORGEJO_URL`), so an event names nothing to reach it by."""

from __future__ import annotations

from typing import Final

from resolver.contract.inbound import VendorModel
from resolver.contract.triggers import TaskTrigger

ISSUE_COMMENT: Final = "issue_comment"
REVIEW: Final = "review"


class ForgejoPart(VendorModel):
    """Where in the issue or pull request the trigger was."""

    comment_kind: str | None = None
    """`issue_comment` (a comment that asked) or `review` (a submitted review)."""
    review_type: str | None = None
    """The review's kind as Forgejo names its event (`pull_request_review_comment`, …)."""


def part_of(trigger: TaskTrigger) -> ForgejoPart:
    return ForgejoPart.model_validate(trigger.part)
