"""The GitHub stand-in's comment routes, in GitHub's shapes: conversation comments, review
comments on a pull request's diff, replies in a review thread and reactions to either.
https://docs.github.com/rest/issues/comments https://docs.github.com/rest/pulls/comments
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from integrations.github.standin.state import (
    Answer,
    Comment,
    Page,
    Request,
    body_text,
    error_body,
    missing,
    now,
    timestamp,
)

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})


def _since(request: Request) -> datetime | None:
    """The `since` query parameter (ISO 8601): only comments updated at or after it."""
    values = request.query.get("since")
    if not values:
        return None
    return datetime.fromisoformat(values[-1].replace("Z", "+00:00"))


def _updated_since(comment: Comment, since: datetime | None) -> bool:
    # GitHub's timestamps are whole seconds.
    return since is None or comment.updated_at.replace(microsecond=0) >= since


def create_reaction(api: GitHubAPI, request: Request) -> Answer:
    comment = api.comments.get(int(request.params["comment_id"]))
    if api.repo(request) is None or comment is None:
        return 404, error_body(404, "Not Found")
    return _react(api, request, comment)


def _react(api: GitHubAPI, request: Request, comment: Comment) -> Answer:
    content = (request.body or {}).get("content")
    if content not in REACTIONS:
        errors = [{"resource": "Reaction", "field": "content", "code": "invalid"}]
        return 422, error_body(422, "Validation Failed", errors)
    reaction = {"id": api.new_id(), "content": content, "user": api.user_json(request.login)}
    if (request.login, content) in comment.reactions:
        return 200, {**reaction, "created_at": now()}
    comment.reactions.append((request.login, content))
    return 201, {**reaction, "created_at": now()}


def _comment_json(api: GitHubAPI, comment: Comment) -> dict[str, Any]:
    html = f"{api.web_url}/{comment.repo}/issues/{comment.number}#issuecomment-{comment.id}"
    return {
        "id": comment.id,
        "node_id": f"IC_{comment.id}",
        "url": f"{api.base_url}/repos/{comment.repo}/issues/comments/{comment.id}",
        "html_url": html,
        "issue_url": f"{api.base_url}/repos/{comment.repo}/issues/{comment.number}",
        "body": comment.body,
        "user": api.user_json(comment.login),
        "created_at": timestamp(comment.created_at),
        "updated_at": timestamp(comment.updated_at),
        "author_association": "NONE",
    }


def create_comment(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    body = body_text(request)
    if body is None:
        return missing("body", "IssueComment")
    number = int(request.params["issue_number"])
    comment = Comment(api.new_id(), repo.full_name, number, body, request.login)
    api.comments[comment.id] = comment
    return 201, _comment_json(api, comment)


def update_comment(api: GitHubAPI, request: Request) -> Answer:
    return _update(api, request, api.comments, "IssueComment", _comment_json)


def list_comments(api: GitHubAPI, request: Request) -> Answer:
    return _list(api, request, api.comments, "issue_number", _comment_json)


def _list(
    api: GitHubAPI,
    request: Request,
    comments: dict[int, Comment],
    number_param: str,
    render: Callable[[GitHubAPI, Comment], dict[str, Any]],
) -> Answer:
    """The comments on one issue or pull request, oldest first, updated at or after `since`."""
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    number, since = int(request.params[number_param]), _since(request)
    found = [
        render(api, c)
        for c in sorted(comments.values(), key=lambda c: c.id)
        if (c.repo, c.number) == (repo.full_name, number) and _updated_since(c, since)
    ]
    return 200, Page(found)


def _update(
    api: GitHubAPI,
    request: Request,
    comments: dict[int, Comment],
    resource: str,
    render: Callable[[GitHubAPI, Comment], dict[str, Any]],
) -> Answer:
    """A new body for a comment of the request's repository (`resource` names it in a 422)."""
    repo = api.repo(request)
    comment = comments.get(int(request.params["comment_id"]))
    if repo is None or comment is None or comment.repo != repo.full_name:
        return 404, error_body(404, "Not Found")
    body = body_text(request)
    if body is None:
        return missing("body", resource)
    comment.body, comment.updated_at = body, datetime.now(UTC)
    return 200, render(api, comment)


def _review_comment_json(api: GitHubAPI, comment: Comment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "in_reply_to_id": comment.in_reply_to,
        "body": comment.body,
        "path": comment.path,
        "line": comment.line,
        "diff_hunk": comment.diff_hunk or "",
        "pull_request_review_id": comment.review_id,
        "user": api.user_json(comment.login),
        "html_url": f"{api.web_url}/{comment.repo}/pull/{comment.number}#discussion_r{comment.id}",
        "pull_request_url": f"{api.base_url}/repos/{comment.repo}/pulls/{comment.number}",
        "created_at": timestamp(comment.created_at),
        "updated_at": timestamp(comment.updated_at),
    }


def list_review_comments(api: GitHubAPI, request: Request) -> Answer:
    return _list(api, request, api.review_comments, "pull_number", _review_comment_json)


def update_review_comment(api: GitHubAPI, request: Request) -> Answer:
    return _update(
        api, request, api.review_comments, "PullRequestReviewComment", _review_comment_json
    )


def create_review_reaction(api: GitHubAPI, request: Request) -> Answer:
    comment = api.review_comments.get(int(request.params["comment_id"]))
    if api.repo(request) is None or comment is None:
        return 404, error_body(404, "Not Found")
    return _react(api, request, comment)


def create_reply(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    parent = api.review_comments.get(int(request.params["comment_id"]))
    number = int(request.params["pull_number"])
    if repo is None or parent is None or (parent.repo, parent.number) != (repo.full_name, number):
        return 404, error_body(404, "Not Found")
    body = body_text(request)
    if body is None:
        return missing("body", "PullRequestReviewComment")
    reply = Comment(
        api.new_id(), repo.full_name, number, body, request.login, in_reply_to=parent.id
    )
    api.review_comments[reply.id] = reply
    return 201, {
        "id": reply.id,
        "in_reply_to_id": parent.id,
        "body": body,
        "user": api.user_json(request.login),
        "html_url": f"{api.web_url}/{repo.full_name}/pull/{number}#discussion_r{reply.id}",
        "pull_request_url": f"{api.base_url}/repos/{repo.full_name}/pulls/{number}",
    }
