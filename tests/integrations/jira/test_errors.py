"""One fate per Jira failure: 429, 5xx and network errors are transient, other 4xx permanent."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from _pytest.logging import LogCaptureFixture

import integrations.jira.client
from integrations.jira.client import JiraClient
from integrations.jira.standin.api import JiraAPI, User, error_body
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from tests.integrations.jira.conftest import API_TOKEN, EMAIL, ISSUE
from tests.support.ports import free_port
from tests.support.serving import served_answer

COMMENTS = "POST /rest/api/2/issue/{issueIdOrKey}/comment"


@pytest.fixture
def client(jira: JiraAPI, bot: User) -> JiraClient:
    return JiraClient(jira.site, f"{EMAIL}:{API_TOKEN}")


def fail_once(client: JiraClient, jira: JiraAPI, status: int, **fault: object) -> CallbackError:
    jira.fail(COMMENTS, status, **fault)  # type: ignore[arg-type]
    with pytest.raises(CallbackError) as failed:
        client.add_comment(ISSUE, "Queued")
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
    client: JiraClient,
    jira: JiraAPI,
    status: int,
    headers: dict[str, str],
    retry_after: float | None,
) -> None:
    error = fail_once(client, jira, status, headers=headers)
    assert isinstance(error, TransientCallbackError)
    assert (error.status, error.retry_after) == (status, retry_after)
    client.add_comment(ISSUE, "Queued")  # the next try goes through, and nothing was retried
    assert [r.status for r in jira.calls(COMMENTS)] == [status, 201]


def test_an_error_without_a_body_is_named_by_its_reason(client: JiraClient, jira: JiraAPI) -> None:
    error = fail_once(client, jira, 502, body="")
    assert str(error) == f"Jira answered 502 to {COMMENTS}: Bad Gateway"


def test_a_rate_limit_reset_timestamp_is_read_as_seconds(client: JiraClient, jira: JiraAPI) -> None:
    reset = (datetime.now(UTC) + timedelta(seconds=90)).strftime("%Y-%m-%dT%H:%M:%SZ")
    headers = {"X-RateLimit-Reset": reset, "RateLimit-Reason": "jira-quota-tenant-based"}
    error = fail_once(client, jira, 429, headers=headers)
    assert isinstance(error, TransientCallbackError)
    assert error.retry_after is not None and 85 <= error.retry_after <= 91


@pytest.mark.parametrize(
    ("status", "body", "detail"),
    [
        (400, error_body(errors={"comment": "Comment body can not be empty!"}), "Comment body"),
        (403, error_body("You do not have permission to comment"), "do not have permission"),
        (404, error_body("Issue does not exist or you do not have permission to see it."), "Issue"),
    ],
)
def test_other_client_errors_are_permanent_and_say_why(
    client: JiraClient, jira: JiraAPI, status: int, body: object, detail: str
) -> None:
    error = fail_once(client, jira, status, body=body)
    assert type(error) is PermanentCallbackError
    assert error.status == status
    assert str(error).startswith(f"Jira answered {status} to {COMMENTS}: ")
    assert detail in str(error)


def test_a_missing_issue_and_comment_are_permanent(client: JiraClient, jira: JiraAPI) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.add_comment("NOPE-1", "Queued")
    assert failed.value.status == 404
    assert "Issue does not exist" in str(failed.value)
    with pytest.raises(PermanentCallbackError) as failed:
        client.edit_comment(ISSUE, "99", "Done")
    assert failed.value.status == 404
    assert "Can not find a comment for the id: 99." in str(failed.value)


def test_an_issue_the_bot_cannot_see_is_not_found(jira: JiraAPI, bot: User) -> None:
    jira.add_issue("HR-1", summary="Secret", readers=frozenset({"someone-else"}))
    client = JiraClient(jira.site, f"{EMAIL}:{API_TOKEN}")
    with pytest.raises(PermanentCallbackError) as failed:
        client.comments("HR-1", limit=5)
    assert failed.value.status == 404


@pytest.mark.parametrize("credential", [f"{EMAIL}:wrong-token", "a-pat-jira-does-not-know"])
def test_a_wrong_token_is_permanent_and_never_shown(
    jira: JiraAPI, bot: User, credential: str
) -> None:
    client = JiraClient(jira.site, credential)
    with pytest.raises(PermanentCallbackError) as failed:
        client.issue(ISSUE)
    assert failed.value.status == 401
    assert "refused" in str(failed.value)
    assert "wrong-token" not in str(failed.value)
    assert "does-not-know" not in str(failed.value)


def test_an_unreachable_site_is_transient() -> None:
    closed_port = free_port()  # reserved for this test: nothing listens on it
    client = JiraClient(f"http://127.0.0.1:{closed_port}", f"{EMAIL}:{API_TOKEN}")
    with pytest.raises(TransientCallbackError) as failed:
        client.add_comment(ISSUE, "Queued")
    assert "could not be reached" in str(failed.value)
    assert failed.value.status is None


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_site_that_does_not_answer_in_time_is_transient(
    silent_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integrations.jira.client, "TIMEOUT_SECONDS", 0.2)
    client = JiraClient(f"http://127.0.0.1:{silent_port}", f"{EMAIL}:{API_TOKEN}")
    with pytest.raises(TransientCallbackError) as failed:
        client.comments(ISSUE, limit=5)
    assert "did not answer" in str(failed.value)


def test_a_site_url_without_a_scheme_is_permanent() -> None:
    client = JiraClient("acme.atlassian.net", f"{EMAIL}:{API_TOKEN}")
    with pytest.raises(PermanentCallbackError) as failed:
        client.issue(ISSUE)
    assert "site URL cannot be used" in str(failed.value)


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (b"<html>SSO sign-in page SECRET-PAGE-TEXT</html>", "text/html"),
        (b"[]", "application/json"),
        (b"{}", "application/json"),
        (b'{"id": null, "comments": [1]}', "application/json"),
    ],
)
def test_an_answer_of_the_wrong_shape_is_an_unusable_answer_and_not_logged(
    answer: bytes, kind: str, caplog: LogCaptureFixture
) -> None:
    """A page served as 200 or JSON without what the call reads fails once as Jira's unusable
    answer (not as a lost connection retried eight times, nor a KeyError), and the page is
    not written to the logs."""
    with served_answer(answer, content_type=kind) as url:
        client = JiraClient(url, f"{EMAIL}:{API_TOKEN}")
        calls: tuple[Callable[[], object], ...] = (
            lambda: client.add_comment(ISSUE, "Queued"),
            lambda: client.comments(ISSUE, 5),
            lambda: client.issue(ISSUE),
        )
        for call in calls:
            with pytest.raises(PermanentCallbackError, match="unusable"):
                call()
    assert "SECRET-PAGE-TEXT" not in caplog.text
