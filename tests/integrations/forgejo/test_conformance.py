"""The webhook fixtures and the stand-in speak Forgejo's API as published: every object in a
payload, every request the client sends and every answer the stand-in gives is checked against
Forgejo's API description (integrations/forgejo/standin/swagger_subset.json)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from integrations.forgejo.client import ForgejoClient
from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.conformance import (
    answer_problems,
    definitions,
    description,
    operation,
    operations,
    request_problems,
    shape_problems,
)
from integrations.forgejo.standin.handlers import ROUTES
from integrations.forgejo.standin.state import Repo
from tests.integrations.forgejo.conftest import BOT_TOKEN, REPO
from tests.integrations.forgejo.deliveries import fixture_paths

# The API objects each payload's fields hold (modules/structs/hook.go).
PAYLOAD_FIELDS = {
    "issue": "Issue",
    "comment": "Comment",
    "pull_request": "PullRequest",
    "repository": "Repository",
    "sender": "User",
    "pusher": "User",
    "requested_reviewer": "User",
    "commits": "[PayloadCommit]",
    "head_commit": "PayloadCommit",
}
PATHS = fixture_paths()


def test_the_subset_comes_from_the_published_description() -> None:
    assert "7958942e3e7ef8bf11638047232e53c122524927" in description()["source"]
    assert len(operations()) > 400
    assert operations()["GET /repos/{owner}/{repo}/pulls"]["query"] == [
        "labels",
        "limit",
        "milestone",
        "page",
        "poster",
        "sort",
        "state",
    ]
    # Forgejo has no `draft` when creating a pull request: a `WIP:` title makes one.
    assert "draft" not in operations()["POST /repos/{owner}/{repo}/pulls"]["body"]
    assert "draft" in definitions()["PullRequest"]


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_every_fixture_object_is_the_apis(path: Path) -> None:
    payload = json.loads(path.read_text())
    problems = [
        problem
        for field, kind in PAYLOAD_FIELDS.items()
        if field in payload
        for problem in shape_problems(kind, payload[field], field)
    ]
    assert problems == []


def test_the_checker_flags_what_forgejo_does_not_document() -> None:
    assert operation("GET", "/repos/o/r/pulls/5") == "GET /repos/{owner}/{repo}/pulls/{index}"
    assert operation("GET", "/repos/o/r/pulls/pinned") == "GET /repos/{owner}/{repo}/pulls/pinned"
    assert request_problems("POST", "/repos/o/r/issues/7/comment", [], {"body": "x"}) == [
        "POST /repos/o/r/issues/7/comment: no such operation"
    ]
    assert request_problems("POST", "/repos/o/r/pulls", [], {"title": "t", "draft": True}) == [
        "POST /repos/{owner}/{repo}/pulls: unknown [] ['draft']"
    ]
    assert request_problems("GET", "/repos/o/r/pulls", ["head"], None) == [
        "GET /repos/{owner}/{repo}/pulls: unknown ['head'] []"
    ]
    assert shape_problems("Comment", {"id": 1, "user": {"login": "a", "type": "Bot"}}, "c") == [
        "c.user: User has no 'type'"
    ]


def test_every_stand_in_route_is_a_forgejo_operation() -> None:
    assert sorted(set(ROUTES) - set(operations())) == []


def test_every_request_and_answer_of_every_client_method_conforms(
    forgejo_api: ForgejoAPI, client: ForgejoClient, repo: Repo
) -> None:
    forgejo_api.add_org("forgejo", "resolver")
    comment = forgejo_api.add_comment(repo, 7, "@resolver go", "alice")

    client.authenticated_login()
    client.can_write(REPO, "alice")
    client.repository(REPO)
    status = client.post_comment(REPO, 7, "Queued")
    client.edit_comment(REPO, status, "Done")
    client.issue_comments(REPO, 7, since=datetime(2025, 1, 1, tzinfo=UTC))
    client.react(REPO, comment.id)
    client.react_to_issue(REPO, 7)
    pull = client.open_draft_pull(REPO, "resolver/7-go", "main", "Go", "Fixes #7")
    client.open_draft_pull(REPO, "resolver/7-go", "main", "Go", "Fixes #7")  # the 409 path
    client.get_pull(REPO, pull.number)
    client.edit_pull_body(REPO, pull.number, "Fixes #7, verified")
    client.open_pulls(REPO, "main")
    made = forgejo_api.pulls[0]
    forgejo_api.add_review(made, "alice", [("widget.py", 3, "Rename this"), ("widget.py", -2, "?")])
    forgejo_api.add_review(made, "bob", [], body="Looks fine")
    assert len(client.review_comments(REPO, pull.number)) == 2
    review = {"body": "Two notes", "event": "COMMENT", "commit_id": "", "comments": []}
    review["comments"] = [{"path": "widget.py", "body": "x", "new_position": 3}]
    client.create_review(REPO, pull.number, review)
    assert [r["body"] for r in client.reviews(REPO, pull.number)][-1] == "Two notes"
    hook = client.create_repo_hook(REPO, "https://resolver.example/webhooks/forgejo", "s3")
    org_hook = client.create_org_hook("forgejo", "https://resolver.example/webhooks/forgejo", "s3")
    assert len(client.hooks(REPO)) == len(client.hooks("forgejo", org=True)) == 1
    client.edit_hook(REPO, hook, "https://resolver.example/webhooks/forgejo", "s4")
    client.edit_hook(
        "forgejo", org_hook, "https://resolver.example/webhooks/forgejo", "s4", org=True
    )
    forgejo_api.add_token("alice-token", "alice")
    lister = ForgejoClient(forgejo_api.url, lambda: "alice-token")
    assert lister.find_open_pull(REPO, "resolver/7-go") is not None

    used = {r.route for r in forgejo_api.requests}
    assert used == set(ROUTES)
    assert [r.status for r in forgejo_api.requests if r.status >= 300] == [409]
    problems = [
        problem
        for r in forgejo_api.requests
        for problem in request_problems(r.method, r.path, list(r.query), r.body)
    ]
    problems += [p for a in forgejo_api.answers for p in answer_problems(a.method, a.path, a.body)]
    assert problems == []


def test_the_hook_listings_conform(forgejo_api: ForgejoAPI, repo: Repo) -> None:
    forgejo_api.add_org("forgejo", "resolver")
    client = ForgejoClient(forgejo_api.url, lambda: BOT_TOKEN)
    client.create_repo_hook(REPO, "https://resolver.example/webhooks/forgejo", "s3")
    with httpx.Client(headers={"Authorization": f"token {BOT_TOKEN}"}) as http:
        for path in (f"/repos/{REPO}/hooks", "/orgs/forgejo/hooks"):
            answer = http.get(f"{forgejo_api.url}/api/v1{path}")
            assert answer.status_code == 200
            assert answer_problems("GET", path, answer.json()) == []
    assert request_problems("GET", f"/repos/{REPO}/hooks", [], None) == []
