"""One fate per Linear failure: rate limits (HTTP 429 or a RATELIMITED error), 5xx and network
errors are transient with the wait Linear names; authentication, permission and input errors
are permanent."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest

from integrations.linear.client import LinearClient, retry_after
from integrations.linear.standin.api import (
    Actor,
    LinearAPI,
    LinearIssue,
    error_document,
    reset_headers,
)
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from tests.integrations.linear.conftest import OAUTH_TOKEN
from tests.support.ports import free_port
from tests.support.serving import served_answer


@pytest.fixture
def client(linear: LinearAPI, app: Actor) -> LinearClient:
    return LinearClient(linear.url, OAUTH_TOKEN)


def fail_once(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue, status: int, **fault: object
) -> CallbackError:
    linear.fail("commentCreate", status, **fault)  # type: ignore[arg-type]
    with pytest.raises(CallbackError) as failed:
        client.create_comment(issue.id, "Queued")
    return failed.value


def test_http_429_waits_until_the_request_budget_refills(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue
) -> None:
    error = fail_once(client, linear, issue, 429)  # Linear's headers: reset in 30 s
    assert isinstance(error, TransientCallbackError)
    assert error.status == 429
    assert error.retry_after is not None and 25 <= error.retry_after <= 30
    assert "Rate limit exceeded (RATELIMITED)" in str(error)
    client.create_comment(issue.id, "Queued")  # the next try goes through
    assert [r.status for r in linear.calls("commentCreate")] == [429, 200]


@pytest.mark.parametrize("status", [200, 400])
def test_a_ratelimited_error_is_transient_whatever_the_status(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue, status: int
) -> None:
    body = error_document("Rate limit exceeded", "RATELIMITED")
    error = fail_once(client, linear, issue, status, body=body, headers=reset_headers(12))
    assert isinstance(error, TransientCallbackError)
    assert error.retry_after is not None and 7 <= error.retry_after <= 12


@pytest.mark.parametrize(
    ("status", "headers", "retry_after"),
    [(500, {}, None), (502, {}, None), (503, {"Retry-After": "9"}, 9.0)],
)
def test_server_errors_are_transient(
    client: LinearClient,
    linear: LinearAPI,
    issue: LinearIssue,
    status: int,
    headers: dict[str, str],
    retry_after: float | None,
) -> None:
    error = fail_once(client, linear, issue, status, headers=headers)
    assert isinstance(error, TransientCallbackError)
    assert (error.status, error.retry_after) == (status, retry_after)


def test_an_internal_error_reported_with_200_is_transient(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue
) -> None:
    body = error_document("Internal server error", "INTERNAL_SERVER_ERROR")
    error = fail_once(client, linear, issue, 200, body=body)
    assert isinstance(error, TransientCallbackError)
    assert error.status is None


@pytest.mark.parametrize(
    ("status", "code", "expected_status"),
    [
        (400, "GRAPHQL_VALIDATION_FAILED", 400),
        (200, "FORBIDDEN", None),
        (200, "INVALID_INPUT", None),
    ],
)
def test_input_and_permission_errors_are_permanent(
    client: LinearClient,
    linear: LinearAPI,
    issue: LinearIssue,
    status: int,
    code: str,
    expected_status: int | None,
) -> None:
    error = fail_once(client, linear, issue, status, body=error_document("Refused", code))
    assert type(error) is PermanentCallbackError
    assert error.status == expected_status
    assert str(error) == f"Linear answered {status} to CommentCreate: Refused ({code})"


def test_a_missing_issue_is_permanent(client: LinearClient) -> None:
    with pytest.raises(PermanentCallbackError, match=r"Entity not found: Issue \(INVALID_INPUT\)"):
        client.issue_with_comments("ENG-404", limit=5)


def test_editing_someone_elses_comment_is_permanent(
    client: LinearClient, linear: LinearAPI, issue: LinearIssue, ann: Actor
) -> None:
    theirs = linear.add_comment(issue, "mine", ann)
    with pytest.raises(PermanentCallbackError, match="FORBIDDEN"):
        client.update_comment(theirs.id, "changed")
    assert theirs.body == "mine"


@pytest.mark.parametrize("token", ["lin_oauth_revoked-token-value", "lin_api_revoked-key-value"])
def test_a_wrong_token_is_permanent_and_never_shown(
    linear: LinearAPI, issue: LinearIssue, token: str
) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        LinearClient(linear.url, token).react("any")
    assert failed.value.status == 401
    assert "AUTHENTICATION_ERROR" in str(failed.value)
    assert "refused" in str(failed.value)
    assert "revoked" not in str(failed.value)


def test_an_api_key_sent_as_bearer_is_refused(
    linear: LinearAPI, issue: LinearIssue, service_user: Actor
) -> None:
    """Keys without Linear's prefix are taken for OAuth tokens: the stand-in, like Linear,
    tells the two apart by the header's form."""
    unprefixed = next(iter(linear.api_keys)).removeprefix("lin_api_")
    linear.add_api_key(unprefixed, service_user)
    with pytest.raises(PermanentCallbackError):
        LinearClient(linear.url, unprefixed).create_comment(issue.id, "Queued")


def test_an_unreachable_api_is_transient() -> None:
    closed_port = free_port()  # reserved for this test: nothing listens on it
    client = LinearClient(f"http://127.0.0.1:{closed_port}/graphql", OAUTH_TOKEN)
    with pytest.raises(TransientCallbackError, match="could not be reached") as failed:
        client.react("any")
    assert failed.value.status is None


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_an_api_that_does_not_answer_in_time_is_transient(silent_port: int) -> None:
    client = LinearClient(f"http://127.0.0.1:{silent_port}/graphql", OAUTH_TOKEN, timeout=0.2)
    with pytest.raises(TransientCallbackError, match="did not answer"):
        client.react("any")


def test_an_api_url_without_a_scheme_is_permanent() -> None:
    with pytest.raises(PermanentCallbackError, match="URL cannot be used"):
        LinearClient("api.linear.app/graphql", OAUTH_TOKEN).react("any")


def test_retry_after_is_retry_after_else_when_the_exhausted_budget_refills() -> None:
    now_ms = time.time() * 1000
    headers = {
        "X-RateLimit-Requests-Remaining": "120",
        "X-RateLimit-Requests-Reset": str(int(now_ms + 3_600_000)),
        "X-RateLimit-Complexity-Remaining": "0",
        "X-RateLimit-Complexity-Reset": str(int(now_ms + 20_000)),
    }
    wait = retry_after(headers)
    assert wait is not None and 15 <= wait <= 20
    assert retry_after({**headers, "Retry-After": "4"}) == 4.0
    exhausted = {"X-RateLimit-Requests-Remaining": "0"}
    past = str(int(now_ms - 5000))
    assert retry_after({**exhausted, "X-RateLimit-Requests-Reset": past}) == 0.0
    assert retry_after({**exhausted, "X-RateLimit-Requests-Reset": "soon"}) is None
    assert retry_after({**headers, "X-RateLimit-Complexity-Remaining": "7"}) is None
    assert retry_after({}) is None


@pytest.mark.parametrize(
    ("call", "answer"),
    [
        ("create", b'{"data": {"commentCreate": {"success": true}}}'),
        ("create", b'{"data": {"commentCreate": {"success": true, "comment": {"id": null}}}}'),
        ("issue", b'{"data": {"issue": {"comments": {"nodes": []}}}}'),
        ("issue", b'{"data": {"issue": {"id": "i", "comments": {"nodes": [1]}}}}'),
        ("issue", b'{"data": {"issue": {"id": "i", "comments": ["x"]}}}'),
    ],
)
def test_an_answer_of_the_wrong_shape_is_an_unusable_answer(call: str, answer: bytes) -> None:
    """Data without what the operation reads fails once as Linear's unusable answer, never as
    the client's own KeyError or AttributeError, and no id is 'None'."""
    with served_answer(answer) as url:
        client = LinearClient(f"{url}/graphql", OAUTH_TOKEN)
        calls: dict[str, Callable[[], object]] = {
            "create": lambda: client.create_comment("i", "Queued"),
            "issue": lambda: client.issue_with_comments("i", 5),
        }
        with pytest.raises(PermanentCallbackError, match="unusable"):
            calls[call]()
