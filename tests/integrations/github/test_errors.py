"""One fate per failure: 5xx, 429, rate limits and network errors are transient, other 4xx not."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Final

import pytest

from integrations.github.client import GitHubClient
from integrations.github.standin.api import GitHubAPI, Repo, error_body
from resolver.contract.errors import (
    CallbackError,
    PermanentCallbackError,
    TransientCallbackError,
    is_transient_status,
    parse_retry_after,
)
from resolver.core.settings import Settings
from tests.integrations.github.conftest import REPO, make_settings
from tests.support.ports import free_port
from tests.support.serving import served_answer

USER_TOKEN = "ghp_" + "Z9" * 18
COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


@pytest.fixture
def client(settings: Settings, github_api: GitHubAPI, repo: Repo) -> GitHubClient:
    github_api.add_token(USER_TOKEN, "bob")
    return GitHubClient(settings, lambda: USER_TOKEN)


def fail_once(client: GitHubClient, api: GitHubAPI, status: int, **fault: object) -> CallbackError:
    api.fail(COMMENTS, status, **fault)  # type: ignore[arg-type]
    with pytest.raises(CallbackError) as failed:
        client.post_comment(REPO, 7, "Queued")
    return failed.value


@pytest.mark.parametrize(
    ("status", "headers", "retry_after"),
    [
        (500, {}, None),
        (502, {}, None),
        (503, {"Retry-After": "12"}, 12.0),
        (429, {"Retry-After": "7"}, 7.0),
        (429, {}, None),
    ],
    ids=["500", "502", "503-retry-after", "429-retry-after", "429-bare"],
)
def test_server_errors_and_429_are_transient(
    client: GitHubClient,
    github_api: GitHubAPI,
    status: int,
    headers: dict[str, str],
    retry_after: float | None,
) -> None:
    error = fail_once(client, github_api, status, headers=headers)
    assert isinstance(error, TransientCallbackError)
    assert (error.status, error.retry_after) == (status, retry_after)
    client.post_comment(REPO, 7, "Queued")  # the next try goes through
    assert [r.status for r in github_api.calls(COMMENTS)] == [status, 201]


def test_an_http_date_retry_after_is_read_as_seconds(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    error = fail_once(client, github_api, 503, headers={"Retry-After": when})
    assert isinstance(error, TransientCallbackError)
    assert error.retry_after is not None and 85 <= error.retry_after <= 91


def test_primary_rate_limit_waits_until_the_reset(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    reset = str(int(time.time()) + 40)
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}
    body = error_body(403, "API rate limit exceeded for installation ID 77.")
    error = fail_once(client, github_api, 403, headers=headers, body=body)
    assert isinstance(error, TransientCallbackError)
    assert error.status == 403
    assert error.retry_after is not None and 35 <= error.retry_after <= 41


@pytest.mark.parametrize("status", [403, 429])
def test_secondary_rate_limit_with_retry_after(
    client: GitHubClient, github_api: GitHubAPI, status: int
) -> None:
    error = fail_once(
        client,
        github_api,
        status,
        headers={"Retry-After": "30"},
        body=error_body(status, SECONDARY),
    )
    assert isinstance(error, TransientCallbackError)
    assert error.retry_after == 30.0


def test_secondary_rate_limit_without_headers_waits_a_minute(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    error = fail_once(client, github_api, 403, body=error_body(403, SECONDARY))
    assert isinstance(error, TransientCallbackError)
    assert error.retry_after == 60.0


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "Bad credentials"),
        (403, "Resource not accessible by integration"),
        (404, "Not Found"),
        (410, "Issues are disabled for this repo"),
        (422, "Validation Failed"),
    ],
)
def test_other_client_errors_are_permanent_and_say_why(
    client: GitHubClient, github_api: GitHubAPI, status: int, message: str
) -> None:
    error = fail_once(client, github_api, status, body=error_body(status, message))
    assert type(error) is PermanentCallbackError
    assert error.status == status
    assert str(error) == f"GitHub answered {status} to {COMMENTS}: {message}"


def test_validation_details_are_part_of_the_message(
    client: GitHubClient, github_api: GitHubAPI
) -> None:
    body = error_body(
        422, "Validation Failed", [{"resource": "IssueComment", "message": "too long"}]
    )
    error = fail_once(client, github_api, 422, body=body)
    assert str(error).endswith("Validation Failed: too long")


def test_an_unreachable_api_is_transient(settings: Settings) -> None:
    closed_port = free_port()  # reserved for this test: nothing listens on it
    offline = make_settings(f"http://127.0.0.1:{closed_port}", None)
    client = GitHubClient(offline, lambda: USER_TOKEN)
    with pytest.raises(TransientCallbackError) as failed:
        client.post_comment(REPO, 7, "Queued")
    assert "could not be reached" in str(failed.value)
    assert failed.value.status is None


def test_a_wrong_token_is_permanent(settings: Settings, github_api: GitHubAPI, repo: Repo) -> None:
    client = GitHubClient(settings, lambda: "ghp_not-a-token-github-knows")
    with pytest.raises(PermanentCallbackError) as failed:
        client.repository(REPO)
    assert failed.value.status == 401
    assert "not-a-token" not in str(failed.value)


def test_retry_after_parsing() -> None:
    now = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    assert parse_retry_after("120", now) == 120.0
    assert parse_retry_after("Fri, 01 May 2026 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Fri, 01 May 2026 11:59:00 GMT", now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None
    assert parse_retry_after(" ", now) is None


@pytest.mark.parametrize(
    ("status", "transient"), [(500, True), (503, True), (429, True), (400, False), (404, False)]
)
def test_transient_statuses(status: int, transient: bool) -> None:
    assert is_transient_status(status) is transient


HTML: Final = b"<html>maintenance</html>"


@pytest.mark.parametrize(
    ("call", "answer"),
    [
        *((call, answer) for call in ("post", "pull", "repo") for answer in (HTML, b"[]", b"{}")),
        *(("may_write", answer) for answer in (HTML, b"[]", b'"admin"')),
        *(("comments", answer) for answer in (HTML, b"{}", b"[1, 2]")),
    ],
)
def test_an_answer_of_the_wrong_shape_is_an_unusable_answer(call: str, answer: bytes) -> None:
    """A proxy's page served as 200, or JSON without what the call reads, fails once as
    GitHub's unusable answer, never as the client's own KeyError or TypeError."""
    kind = "text/html" if answer == HTML else "application/json"
    with served_answer(answer, content_type=kind) as url:
        client = GitHubClient(make_settings(url, None), lambda: USER_TOKEN)
        calls: dict[str, Callable[[], object]] = {
            "post": lambda: client.post_comment(REPO, 7, "Queued"),
            "pull": lambda: client.get_pull(REPO, 7),
            "repo": lambda: client.repository(REPO),
            "may_write": lambda: client.can_write(REPO, "alice"),
            "comments": lambda: client.issue_comments(REPO, 7, 10),
        }
        with pytest.raises(PermanentCallbackError, match="unusable"):
            calls[call]()
