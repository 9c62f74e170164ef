"""Pull request reviews, as GitHub answers them: one review with its comments on lines of the
diff. https://docs.github.com/rest/pulls/reviews

GitHub refuses a whole review (422) when one comment's line is not in the pull request's diff,
or its event is unknown; the stand-in computes the diff itself from the bare repository
(`base...head`), as GitHub does, and refuses the same way.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from integrations.github.standin.state import Answer, Request, error_body
from resolver.contract.review import diff_files

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

EVENTS = frozenset({"COMMENT", "REQUEST_CHANGES", "APPROVE"})
SIDES = frozenset({"LEFT", "RIGHT"})


@dataclass
class Review:
    id: int
    repo: str
    number: int
    login: str
    body: str
    event: str
    commit_id: str | None
    comments: list[dict[str, Any]] = field(default_factory=list)


def _diff(api: GitHubAPI, repo_name: str, base: str, head: str) -> str | None:
    repo = api.repos.get(repo_name)
    if repo is None or repo.bare is None:
        return None
    done = subprocess.run(
        ["git", "-C", str(repo.bare), "diff", "--no-color", f"{base}...{head}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def _unprocessable(message: str) -> Answer:
    return 422, error_body(422, "Unprocessable Entity", [{"message": message}])


def _problem(comment: object, files: dict[str, Any] | None) -> str | None:
    """Why GitHub would refuse one comment of a review."""
    if not isinstance(comment, dict) or not isinstance(comment.get("body"), str):
        return "a comment needs a body"
    path, line, side = comment.get("path"), comment.get("line"), comment.get("side", "RIGHT")
    if not isinstance(path, str) or not isinstance(line, int) or side not in SIDES:
        return "a comment needs a path, a line and a side"
    if files is None:
        return None
    file = files.get(path)
    if file is None or file.at(line, side) is None:
        return "Pull request review thread line must be part of the diff"
    return None


def create_review(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    number = int(request.params["pull_number"])
    pull = next(
        (p for p in api.pulls if repo and (p.repo, p.number) == (repo.full_name, number)), None
    )
    if repo is None or pull is None:
        return 404, error_body(404, "Not Found")
    body = request.body if isinstance(request.body, dict) else {}
    event = body.get("event", "COMMENT")
    if event not in EVENTS:
        return _unprocessable(f"unknown event {event!r}")
    comments = body.get("comments") or []
    patch = _diff(api, repo.full_name, pull.base, pull.head)
    files = diff_files(patch) if patch is not None else None
    problems = [p for c in comments if (p := _problem(c, files))]
    if problems:
        return _unprocessable(problems[0])
    review = Review(
        api.new_id(),
        repo.full_name,
        number,
        request.login,
        str(body.get("body") or ""),
        event,
        body.get("commit_id"),
        list(comments),
    )
    with api.lock:
        api.reviews.append(review)
    return 200, _review_json(api, review)


def list_reviews(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    number = int(request.params["pull_number"])
    found = [r for r in api.reviews if (r.repo, r.number) == (repo.full_name, number)]
    return 200, [_review_json(api, r) for r in found]


def _review_json(api: GitHubAPI, review: Review) -> dict[str, Any]:
    states = {"COMMENT": "COMMENTED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}
    return {
        "id": review.id,
        "user": api.user_json(review.login),
        "body": review.body,
        "state": states.get(review.event, "APPROVED"),
        "commit_id": review.commit_id,
        "html_url": f"{api.web_url}/{review.repo}/pull/{review.number}"
        f"#pullrequestreview-{review.id}",
        "pull_request_url": f"{api.base_url}/repos/{review.repo}/pulls/{review.number}",
    }


REVIEW_ROUTES = {
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews": create_review,
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews": list_reviews,
}
