"""The stand-in speaks GitHub's REST API as published: every route, and every request the client
sends, is an operation of GitHub's OpenAPI description (the `@octokit/openapi` package)."""

from __future__ import annotations

from pathlib import Path

from integrations.github.auth import installation_token
from integrations.github.client import GitHubClient
from integrations.github.standin.api import (
    ROUTE_KEYS,
    GitHubAPI,
    Recorded,
    Repo,
    conformance_problems,
    openapi_operation,
    openapi_operations,
)
from integrations.github.standin.app_hooks import APP_ROUTES
from integrations.github.standin.manifest import MANIFEST_ROUTES
from integrations.standin.git_http import GitHttpServer
from resolver.core.settings import Settings
from tests.integrations.github.conftest import INSTALLATION_ID, REPO, push_branch


def test_every_stand_in_route_is_a_github_operation() -> None:
    assert sorted(ROUTE_KEYS - set(openapi_operations())) == []


def test_the_fixture_comes_from_the_published_description() -> None:
    assert len(openapi_operations()) > 1000
    assert openapi_operations()["GET /repos/{owner}/{repo}/pulls"]["query"] == [
        "base",
        "direction",
        "head",
        "page",
        "per_page",
        "sort",
        "state",
    ]


def test_every_request_of_every_client_method_conforms(
    settings: Settings,
    github_api: GitHubAPI,
    repo: Repo,
    git_server: GitHttpServer,
    tmp_path: Path,
) -> None:
    client = GitHubClient(settings, lambda: installation_token(INSTALLATION_ID, settings))
    comment = github_api.add_comment(REPO, 3, "@resolver go", "bob")
    review_comment = github_api.add_review_comment(REPO, 4, "@resolver rename", "bob")
    push_branch(
        git_server, installation_token(INSTALLATION_ID, settings), "resolver/3-go", tmp_path
    )

    client.can_write(REPO, "bob")
    client.react(REPO, comment)
    status = client.post_comment(REPO, 3, "Queued")
    client.edit_comment(REPO, status, "Done")
    client.repository(REPO)
    client.find_open_pull(REPO, "resolver/3-go")
    client.open_draft_pull(REPO, "resolver/3-go", "main", "Go", "Fixes #3")
    reply = client.reply_to_review_comment(REPO, 4, review_comment, "Renamed")
    client.edit_review_comment(REPO, reply, "Renamed, done")
    client.react_to_review_comment(REPO, review_comment)
    client.get_pull(REPO, 1)
    client.edit_pull_body(REPO, 1, "Fixes #3, verified")
    client.create_review(REPO, 1, {"body": "Looks fine", "event": "COMMENT", "comments": []})
    assert [r["body"] for r in client.reviews(REPO, 1)] == ["Looks fine"]
    client.issue_comments(REPO, 3, 10)
    client.review_comments(REPO, 4, 10)
    github_api.add_token("bob-token", "bob")
    assert GitHubClient(settings, lambda: "bob-token").authenticated_login() == "bob"
    github_api.checks.annotations[9] = []
    github_api.checks.logs[9] = "log"
    client.check_annotations(REPO, 9, 50)
    assert client.job_log_location(REPO, 9).startswith(github_api.origin)

    # The App's own routes are the onboarding's (setup and preflight), checked in tests/onboarding.
    app_routes = MANIFEST_ROUTES.keys() | APP_ROUTES.keys()
    assert {r.route for r in github_api.requests} == ROUTE_KEYS - app_routes
    log_route = "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"
    assert all(
        r.status < 300 or (r.status, r.route) == (302, log_route) for r in github_api.requests
    )
    assert conformance_problems(github_api.requests) == []


def recorded(method: str, path: str, query: dict[str, list[str]], body: object) -> Recorded:
    return Recorded(method, path, query, {}, body, 200, None)


def test_the_checker_flags_what_github_does_not_document() -> None:
    assert openapi_operation("GET", "/repos/o/r/pulls") == "GET /repos/{owner}/{repo}/pulls"
    assert (
        openapi_operation("PATCH", "/repos/o/r/issues/comments/5")
        == "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"
    )
    problems = conformance_problems(
        [
            recorded("POST", "/repos/o/r/issues/7/comment", {}, {"body": "x"}),
            recorded("PUT", "/repos/o/r/pulls", {}, None),
            recorded("GET", "/repos/o/r/pulls", {"branch": ["o:b"]}, None),
            recorded("POST", "/repos/o/r/pulls", {}, {"title": "t", "is_draft": True}),
            recorded("GET", "/repos/o/r/pulls", {"head": ["o:b"], "state": ["open"]}, None),
            recorded("POST", "/repos/o/r/pulls/1/reviews", {}, {"comments": [{"line": 1}]}),
            recorded("POST", "/repos/o/r/pulls/1/reviews", {}, {"comments": [{"lines": 1}]}),
        ]
    )
    assert problems == [
        "POST /repos/o/r/issues/7/comment: no such operation",
        "PUT /repos/o/r/pulls: no such operation",
        "GET /repos/{owner}/{repo}/pulls: unknown ['branch'] []",
        "POST /repos/{owner}/{repo}/pulls: unknown [] ['is_draft']",
        "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews: unknown [] ['comments[].lines']",
    ]
