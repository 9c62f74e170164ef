"""A review job's review on GitHub: one pull request review with its line comments, each
suggested change in a `suggestion` block. https://docs.github.com/rest/pulls/reviews

A retry first looks for the review it may have posted already (its hidden tag), so a lost
answer never posts it twice.
"""

from __future__ import annotations

from typing import Any, Final

from integrations.github.auth import client_for_job
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import MessageRef, has_hidden_tag, with_hidden_tag
from resolver.contract.review import DiffComment, ReviewPost, suggestion_block
from resolver.contract.triggers import TaskTrigger, number_of, repo_of
from resolver.core.settings import Settings

EVENTS: Final = {"comment": "COMMENT", "request_changes": "REQUEST_CHANGES"}


def post_review(
    trigger: TaskTrigger, requester_id: int | None, review: ReviewPost, settings: Settings
) -> MessageRef:
    """Post `review` on the trigger's pull request (never an approval)."""
    repo, number = repo_of(trigger), number_of(trigger)
    if not repo or number is None:
        raise PermanentCallbackError("only a pull request can be reviewed")
    client = client_for_job(trigger, requester_id, settings)
    body = with_hidden_tag(review.summary, review.tag)
    earlier = client.reviews(repo, number)
    posted = next((r for r in earlier if has_hidden_tag(r.get("body") or "", review.tag)), None)
    if posted is None:
        posted = client.create_review(repo, number, render_review(review, body))
    return {"review_id": posted.get("id"), "url": posted.get("html_url"), "tag": review.tag}


def render_review(review: ReviewPost, body: str) -> dict[str, Any]:
    """The request body of GitHub's "create a review for a pull request"."""
    return {
        "commit_id": review.head_sha,
        "body": body,
        "event": EVENTS[review.verdict],
        "comments": [_comment(c) for c in review.comments],
    }


def _comment(comment: DiffComment) -> dict[str, Any]:
    body = comment.body
    if comment.suggestion is not None:
        body = f"{body}\n\n{suggestion_block(comment.suggestion)}"
    return {"path": comment.path, "line": comment.line, "side": comment.side, "body": body}
