"""The Forgejo stand-in's pull request reviews: each review and its comments on lines of the
diff, listed as Forgejo lists them (`PullReview`, `PullReviewComment`). A comment's line is
`position` on the new side, `original_position` on the old one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from integrations.forgejo.standin.state import now
from integrations.standin.server import Reply

if TYPE_CHECKING:
    from integrations.forgejo.standin.api import ForgejoAPI
    from integrations.forgejo.standin.handlers import Call


@dataclass
class ReviewComment:
    id: int
    path: str
    line: int  # negative: a line of the old side, as Forgejo stores it
    body: str
    user_id: int
    diff_hunk: str = ""
    resolver_id: int | None = None
    created_at: str = field(default_factory=now)


@dataclass
class Review:
    id: int
    repo: str
    number: int
    user_id: int
    state: str = "COMMENT"
    body: str = ""
    comments: list[ReviewComment] = field(default_factory=list)
    submitted_at: str = field(default_factory=now)


def review_json(api: ForgejoAPI, review: Review) -> dict[str, Any]:
    page = f"{api.origin}/{review.repo}/pulls/{review.number}"
    return {
        "id": review.id,
        "user": api.user(review.user_id),
        "body": review.body,
        "state": review.state,
        "comments_count": len(review.comments),
        "commit_id": "",
        "stale": False,
        "official": False,
        "dismissed": False,
        "html_url": f"{page}#issuecomment-{review.id}",
        "pull_request_url": page,
        "submitted_at": review.submitted_at,
        "updated_at": review.submitted_at,
    }


def comment_json(api: ForgejoAPI, review: Review, comment: ReviewComment) -> dict[str, Any]:
    page = f"{api.origin}/{review.repo}/pulls/{review.number}"
    resolver = api.user(comment.resolver_id) if comment.resolver_id is not None else None
    return {
        "id": comment.id,
        "body": comment.body,
        "user": api.user(comment.user_id),
        "resolver": resolver,
        "pull_request_review_id": review.id,
        "path": comment.path,
        "position": max(comment.line, 0),
        "original_position": max(-comment.line, 0),
        "diff_hunk": comment.diff_hunk,
        "commit_id": "",
        "original_commit_id": "",
        "html_url": f"{page}/files#issuecomment-{comment.id}",
        "pull_request_url": page,
        "created_at": comment.created_at,
        "updated_at": comment.created_at,
    }


def list_reviews(api: ForgejoAPI, call: Call) -> Reply:
    pull = api.pull_of(call)
    found = [r for r in api.reviews if (r.repo, r.number) == (pull.repo, pull.number)]
    return 200, [review_json(api, r) for r in found], {}


def list_review_comments(api: ForgejoAPI, call: Call) -> Reply:
    pull = api.pull_of(call)
    review = next((r for r in api.reviews if r.id == int(call.params["id"])), None)
    if review is None or (review.repo, review.number) != (pull.repo, pull.number):
        return api.refuse(404, "review does not exist")
    return 200, [comment_json(api, review, c) for c in review.comments], {}


EVENTS = frozenset({"APPROVED", "PENDING", "COMMENT", "REQUEST_CHANGES", "REQUEST_REVIEW"})


def create_review(api: ForgejoAPI, call: Call) -> Reply:
    """A review with its line comments (`CreatePullReviewOptions`): each comment's line is its
    `new_position`, else its `old_position` on the old side."""
    pull = api.pull_of(call)
    body = call.body
    event = body.get("event", "PENDING")
    if event not in EVENTS:
        return api.refuse(422, f"unknown review state {event!r}")
    made = []
    for item in body.get("comments") or []:
        new, old = item.get("new_position") or 0, item.get("old_position") or 0
        if not isinstance(item.get("path"), str) or not (new or old):
            return api.refuse(422, "a review comment needs a path and a position")
        line = int(new) if new else -int(old)
        made.append(
            ReviewComment(
                api.new_id(), item["path"], line, str(item.get("body") or ""), call.user_id
            )
        )
    review = Review(
        api.new_id(),
        pull.repo,
        pull.number,
        call.user_id,
        state=event,
        body=str(body.get("body") or ""),
        comments=made,
    )
    api.reviews.append(review)
    found = review_json(api, review)
    return 200, {**found, "commit_id": str(body.get("commit_id") or "")}, {}


REVIEW_ROUTES = {
    "POST /repos/{owner}/{repo}/pulls/{index}/reviews": create_review,
    "GET /repos/{owner}/{repo}/pulls/{index}/reviews": list_reviews,
    "GET /repos/{owner}/{repo}/pulls/{index}/reviews/{id}/comments": list_review_comments,
}
