"""The webhook fixtures and the stand-in speak Forgejo's API as published: every object in a
payload, every request the client sends and every answer the stand-in gives is checked against
Forgejo's API description (integrations/forgejo/standin/swagger_subset.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from integrations.forgejo.standin.conformance import (
    definitions,
    description,
    operation,
    operations,
    request_problems,
    shape_problems,
)
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
