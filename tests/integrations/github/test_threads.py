"""Resolving a review thread over GitHub's GraphQL API, against the stand-in that validates every
operation with GitHub's published schema: found by its first comment across pages, resolved
once, and every refusal (a 200 with `errors`) a permanent error that names it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import parse, print_ast

from integrations.github.auth import installation_token
from integrations.github.client import GitHubClient
from integrations.github.standin.api import BOT_LOGIN, GitHubAPI, Repo, conformance_problems
from integrations.github.standin.graphql import SCHEMA_FIXTURE, github_schema, operation_problems
from integrations.github.standin.make_graphql_schema import trim
from integrations.github.threads import find_thread, resolve_review_thread
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.triggers import read_trigger
from resolver.core.settings import Settings
from tests.integrations.github.conftest import (
    APP_ID,
    INSTALLATION_ID,
    REPO,
    AppKey,
    make_settings,
)

THREADS = 'query { repository(owner: "octo", name: "widgets") { pullRequest(number: 1) { %s } } }'


def _client(settings: Settings) -> GitHubClient:
    return GitHubClient(settings, lambda: installation_token(INSTALLATION_ID, settings))


def _review(api: GitHubAPI, threads: int) -> list[int]:
    """A pull request with `threads` review threads by bob, each with a reply by the bot."""
    pull = api.add_pull(REPO, "resolver/1-x", "main", "Fix", BOT_LOGIN)
    roots = [
        api.add_review_comment(REPO, pull.number, f"nit {n}", "bob", "a.py", n + 1)
        for n in range(threads)
    ]
    for root in roots:
        reply = api.add_review_comment(REPO, pull.number, "done", BOT_LOGIN)
        api.review_comments[reply].in_reply_to = root
    return roots


def test_a_thread_is_found_by_its_first_comment_and_resolved_once(
    settings: Settings, github_api: GitHubAPI, repo: Repo
) -> None:
    roots = _review(github_api, 3)
    client = _client(settings)
    assert resolve_review_thread(client, REPO, 1, roots[1]) is True
    assert resolve_review_thread(client, REPO, 1, roots[1]) is False  # already resolved
    assert github_api.graphql.resolutions == [(f"PRRT_{roots[1]}", BOT_LOGIN)]
    assert find_thread(client, REPO, 1, roots[0]) == (f"PRRT_{roots[0]}", False)
    assert find_thread(client, REPO, 1, roots[1]) == (f"PRRT_{roots[1]}", True)


def test_threads_are_read_page_by_page(
    settings: Settings, github_api: GitHubAPI, repo: Repo
) -> None:
    roots = _review(github_api, 101)
    assert resolve_review_thread(_client(settings), REPO, 1, roots[-1]) is True
    assert len(github_api.calls("POST /graphql")) == 3  # two pages of threads, one mutation


def test_a_comment_that_starts_no_thread_is_a_permanent_error(
    settings: Settings, github_api: GitHubAPI, repo: Repo
) -> None:
    _review(github_api, 1)
    with pytest.raises(PermanentCallbackError, match="no review thread of #1 starts with"):
        resolve_review_thread(_client(settings), REPO, 1, 999)
    assert github_api.graphql.resolutions == []


def test_graphql_errors_are_permanent_errors_that_name_them(
    settings: Settings, github_api: GitHubAPI, repo: Repo
) -> None:
    [root] = _review(github_api, 1)
    github_api.graphql.refuse(
        "resolveReviewThread", "FORBIDDEN", "Resource not accessible by integration"
    )
    with pytest.raises(PermanentCallbackError) as refused:
        resolve_review_thread(_client(settings), REPO, 1, root)
    assert str(refused.value) == (
        "GitHub's GraphQL API refused resolveReviewThread: "
        "FORBIDDEN: Resource not accessible by integration"
    )
    assert github_api.graphql.resolved == {}
    with pytest.raises(PermanentCallbackError, match="NOT_FOUND: Could not resolve to a Pull"):
        resolve_review_thread(_client(settings), REPO, 2, root)


def test_a_person_who_may_not_push_cannot_resolve(
    settings: Settings, github_api: GitHubAPI, repo: Repo
) -> None:
    [root] = _review(github_api, 1)
    github_api.add_token("dave-token", "dave")  # triage
    with pytest.raises(PermanentCallbackError, match="FORBIDDEN: dave does not have the correct"):
        resolve_review_thread(GitHubClient(settings, lambda: "dave-token"), REPO, 1, root)
    github_api.add_token("bob-token", "bob")  # write
    assert resolve_review_thread(GitHubClient(settings, lambda: "bob-token"), REPO, 1, root)
    assert github_api.graphql.resolved == {root: "bob"}


def _post(api: GitHubAPI, body: Any, token: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(f"{api.base_url}/graphql", json=body, headers=headers)


def test_the_stand_in_answers_invalid_operations_with_errors_as_github_does(
    app_key: AppKey,
) -> None:
    """HTTP 200 with `errors` and no `data` for what the schema refuses; 401 without a token.
    Outside the fixture, whose conformance check would (rightly) flag these requests."""
    with GitHubAPI(app_id=APP_ID, public_key=app_key.public_pem) as api:
        api.add_token("bob-token", "bob")
        unknown = _post(api, {"query": THREADS % "reviewThreads(first: 1) { colour }"}, "bob-token")
        broken = _post(api, {"query": "query { repository("}, "bob-token")
        missing = _post(api, {"query": THREADS % "reviewThreads { totalCount }"}, "bob-token")
        anonymous = _post(api, {"query": "query { viewer { login } }"}, None)
    assert unknown.status_code == 200 and "data" not in unknown.json()
    [error] = unknown.json()["errors"]
    assert (
        error["message"]
        == "Cannot query field 'colour' on type 'PullRequestReviewThreadConnection'."
    )
    assert error["locations"]
    assert broken.status_code == 200 and broken.json()["errors"][0]["message"].startswith("Syntax")
    assert missing.status_code == 200
    [error] = missing.json()["errors"]
    assert error["type"] == "NOT_FOUND" and error["path"] == ["repository"]
    assert missing.json()["data"] == {"repository": None}
    assert anonymous.status_code == 401 and anonymous.json()["message"] == "Bad credentials"


def test_the_conformance_check_reads_graphql_against_the_schema() -> None:
    assert operation_problems(
        {"query": "mutation { resolveReviewThread(input: {}) { thread { id } } }"}
    )
    assert operation_problems({"query": "query { viewer { login } }"}) == []
    assert operation_problems({"variables": {}}) == [
        "A query attribute must be specified and must be a string."
    ]


def test_the_schema_fixture_is_githubs_cut_to_what_the_stand_in_serves() -> None:
    fixture = SCHEMA_FIXTURE.read_text()
    assert fixture.startswith("# Generated by integrations/github/standin/make_graphql_schema.py")
    assert len(fixture.encode()) < 300_000
    mutation = github_schema().mutation_type
    assert mutation is not None and "resolveReviewThread" in mutation.fields
    cut = trim(
        parse(
            "type Query { repository: Repository, gist: Gist }\n"
            "type Repository { name: String, owner: Gist, labels(after: Cursor): String }\n"
            "type Gist { id: ID }\nscalar Cursor\n"
        )
    )
    assert " ".join(print_ast(cut).split()) == (
        "type Query { repository: Repository } "
        "type Repository { name: String labels(after: Cursor): String } scalar Cursor"
    )


def test_github_enterprise_takes_graphql_beside_its_rest_prefix(
    app_key: AppKey, key_file: Path
) -> None:
    """GHES serves REST under /api/v3 and GraphQL at /api/graphql; githubkit knows both."""
    with GitHubAPI(app_id=APP_ID, public_key=app_key.public_pem, prefix="/api/v3") as api:
        api.add_installation(INSTALLATION_ID)
        api.add_repo(REPO, "https://ghe.example.test/octo/widgets.git")
        [root] = _review(api, 1)
        settings = make_settings(api.base_url, key_file)
        assert resolve_review_thread(_client(settings), REPO, 1, root) is True
    assert [r.path for r in api.calls("POST /graphql")] == ["/graphql", "/graphql"]
    assert api.graphql.resolved == {root: BOT_LOGIN} and conformance_problems(api.requests) == []


def _conversation(settings: Settings) -> Any:
    from integrations.github.provider import GitHubConversation

    context = {"repo": REPO, "number": 1, "is_pull_request": True}
    return GitHubConversation(_client(settings), read_trigger(context))


def test_a_thread_a_person_resolved_is_not_taken_again(
    settings: Settings, github_api: GitHubAPI, repo: Repo
) -> None:
    from resolver.features.reviews.worker import open_threads

    github_api.add_pull(REPO, "resolver/1-x", "main", "Fix", BOT_LOGIN)
    roots = [
        github_api.add_review_comment(REPO, 1, f"nit {n}", "bob", "a.py", n + 1) for n in range(3)
    ]
    github_api.graphql.resolved[roots[1]] = "bob"  # resolved on the page, with no bot reply
    history = _conversation(settings).history()
    assert [t.resolved for t in history.review_threads] == [False, True, False]
    assert [t.id for t in open_threads(history)] == [str(roots[0]), str(roots[2])]


def test_without_graphql_the_threads_are_read_from_rest_alone(
    settings: Settings, github_api: GitHubAPI, repo: Repo
) -> None:
    github_api.add_pull(REPO, "resolver/1-x", "main", "Fix", BOT_LOGIN)
    root = github_api.add_review_comment(REPO, 1, "nit", "bob", "a.py", 1)
    github_api.graphql.resolved[root] = "bob"
    github_api.fail("POST /graphql", 502)
    history = _conversation(settings).history()
    assert [(t.id, t.resolved) for t in history.review_threads] == [(str(root), False)]
