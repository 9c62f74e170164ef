"""One fate per failure: 5xx, 429 and network errors are transient, other 4xx permanent; each
call is sent once (python-gitlab neither retries nor sleeps)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler

import pytest

from integrations.gitlab.api import error_detail, retry_after
from integrations.gitlab.client import GitLabClient
from integrations.gitlab.standin.api import GitLabAPI, Project
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from tests.integrations.gitlab.conftest import BOT_TOKEN, make_settings
from tests.support.ports import free_port
from tests.support.serving import served_answer, served_flood, served_handler

NOTES = "POST /projects/{id}/issues/{iid}/notes"
ACTION = "POST /projects/:id/issues/:iid/notes"


def fail_once(
    client: GitLabClient, api: GitLabAPI, project: Project, status: int, **fault: object
) -> CallbackError:
    api.fail(NOTES, status, **fault)  # type: ignore[arg-type]
    with pytest.raises(CallbackError) as failed:
        client.post_note(project.id, "issue", 7, "Queued")
    return failed.value


@pytest.mark.parametrize(
    ("status", "headers", "wait"),
    [
        (500, {}, None),
        (502, {}, None),
        (503, {"Retry-After": "12"}, 12.0),
        (429, {"Retry-After": "7"}, 7.0),
        (429, {}, None),
    ],
    ids=["500", "502", "503-retry-after", "429-retry-after", "429-bare"],
)
def test_server_errors_and_429_are_transient_and_sent_once(
    client: GitLabClient,
    gitlab_api: GitLabAPI,
    project: Project,
    status: int,
    headers: dict[str, str],
    wait: float | None,
) -> None:
    error = fail_once(client, gitlab_api, project, status, headers=headers)
    assert isinstance(error, TransientCallbackError)
    assert (error.status, error.retry_after) == (status, wait)
    assert [r.status for r in gitlab_api.calls(NOTES)] == [status]  # no retry inside the call
    client.post_note(project.id, "issue", 7, "Queued")  # the task's next try goes through
    assert [r.status for r in gitlab_api.calls(NOTES)] == [status, 201]


def test_429_waits_until_the_rate_limit_resets(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    reset = str(int(time.time()) + 40)
    headers = {"RateLimit-Remaining": "0", "RateLimit-Reset": reset}
    error = fail_once(client, gitlab_api, project, 429, headers=headers, body=b"Retry later\n")
    assert isinstance(error, TransientCallbackError)
    assert error.retry_after is not None and 35 <= error.retry_after <= 41
    assert str(error) == f"GitLab answered 429 to {ACTION}: Retry later"


def test_an_http_date_retry_after_is_read_as_seconds(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    error = fail_once(client, gitlab_api, project, 503, headers={"Retry-After": when})
    assert isinstance(error, TransientCallbackError)
    assert error.retry_after is not None and 85 <= error.retry_after <= 91


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (400, "400 Bad request - body is missing"),
        (401, "401 Unauthorized"),
        (403, "403 Forbidden"),
        (404, "404 Not found"),
        (409, "409 Conflict"),
        (422, "422 Unprocessable Entity"),
    ],
)
def test_other_client_errors_are_permanent_and_say_why(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project, status: int, text: str
) -> None:
    error = fail_once(client, gitlab_api, project, status, body={"message": text})
    assert type(error) is PermanentCallbackError
    assert error.status == status
    assert str(error) == f"GitLab answered {status} to {ACTION}: {text}"
    assert len(gitlab_api.calls(NOTES)) == 1


def test_a_wrong_token_is_permanent_and_not_repeated(
    settings: Settings, gitlab_api: GitLabAPI, project: Project
) -> None:
    wrong = "glpat-not-a-token-gitlab-knows"
    client = GitLabClient(settings, lambda: wrong)
    with pytest.raises(PermanentCallbackError) as failed:
        client.project(project.id)
    assert failed.value.status == 401
    assert str(failed.value) == "GitLab answered 401 to GET /projects/:id: 401 Unauthorized"
    assert gitlab_api.requests[0].headers["private-token"] == wrong


def test_an_unreachable_instance_is_transient(project: Project) -> None:
    closed_port = free_port()  # reserved for this test: nothing listens on it
    client = GitLabClient(make_settings(f"http://127.0.0.1:{closed_port}"), lambda: BOT_TOKEN)
    with pytest.raises(TransientCallbackError) as failed:
        client.post_note(project.id, "issue", 7, "Queued")
    assert str(failed.value) == f"GitLab could not be reached for {ACTION}: ConnectionError"
    assert failed.value.status is None


def test_an_answer_that_is_not_gitlabs_is_permanent(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    error = fail_once(client, gitlab_api, project, 200, body=b"<html>Sign in</html>")
    assert type(error) is PermanentCallbackError
    assert str(error) == f"GitLab's answer to {ACTION} was unusable: GitlabParsingError"


def test_requests_name_resolver(client: GitLabClient, gitlab_api: GitLabAPI) -> None:
    client.project("group/widgets")
    assert gitlab_api.requests[0].headers["user-agent"] == "Resolver (resolver)"


def test_a_credential_error_of_the_token_provider_is_kept(
    settings: Settings, gitlab_api: GitLabAPI
) -> None:
    def no_token() -> str:
        raise PermanentCallbackError("no GitLab token")

    with pytest.raises(PermanentCallbackError, match="no GitLab token"):
        GitLabClient(settings, no_token).project("group/widgets")
    assert gitlab_api.requests == []


def test_gitlab_messages_in_every_shape() -> None:
    assert error_detail("404 Not found") == "404 Not found"
    assert error_detail(["Another open merge request already exists: !3"]) == (
        "Another open merge request already exists: !3"
    )
    assert error_detail({"source_branch": ["does not exist"], "title": ["is too long"]}) == (
        "source_branch does not exist; title is too long"
    )
    assert error_detail(b"<html>Bad Gateway</html>") == "<html>Bad Gateway</html>"
    assert error_detail("") == "no message"
    assert len(error_detail("x" * 1000)) == 300


def test_known_secrets_are_masked_in_gitlab_messages() -> None:
    secret = "glpat-echoed-back-" + "s" * 12
    register_secret(secret)
    assert secret not in error_detail(f"token {secret} is invalid")


def test_retry_after_headers() -> None:
    now = 1_800_000_000.0
    assert retry_after({"Retry-After": "30", "RateLimit-Reset": str(int(now) + 90)}, now) == 30.0
    assert retry_after({"RateLimit-Reset": str(int(now) + 90)}, now) == 90.0
    assert retry_after({"RateLimit-Reset": str(int(now) - 5)}, now) == 0.0
    assert retry_after({"RateLimit-Reset": "soon"}, now) is None
    assert retry_after({}, now) is None


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Authorization": f"Bearer {BOT_TOKEN}"}, 200),
        ({"PRIVATE-TOKEN": BOT_TOKEN}, 200),
        ({"Authorization": f"token {BOT_TOKEN}"}, 401),
        ({}, 401),
    ],
    ids=["bearer", "private-token", "other-scheme", "none"],
)
def test_the_stand_in_authenticates_as_gitlab_does(
    gitlab_api: GitLabAPI, project: Project, headers: dict[str, str], status: int
) -> None:
    url = f"{gitlab_api.url}/api/v4/projects/group%2Fwidgets"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as answer:
            assert (answer.status, json.load(answer)["id"]) == (status, project.id)
    except urllib.error.HTTPError as refused:
        with refused:
            assert (refused.code, json.load(refused)) == (status, {"message": "401 Unauthorized"})


class _Leading(BaseHTTPRequestHandler):
    """A GitLab that answers every call by sending the client to another host."""

    elsewhere = ""
    heard: list[dict[str, str]] = []

    def do_GET(self) -> None:
        if self.server.server_port == int(self.elsewhere.rsplit(":", 1)[1].split("/")[0]):
            type(self).heard.append(dict(self.headers))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"[]")
            return
        pull = {"iid": 1, "web_url": "http://g/1", "source_branch": "b", "target_branch": "main"}
        page = [{**pull, "source_project_id": 1, "target_project_id": 1}] * 100
        self.send_response(302 if "members" in self.path else 200)
        self.send_header("Location", f"{self.elsewhere}/api/v4/x")
        self.send_header("Link", f'<{self.elsewhere}/api/v4/next>; rel="next"')
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(page).encode())

    def log_message(self, *_args: object) -> None:
        return None


def test_the_token_goes_to_the_configured_gitlab_alone() -> None:
    """A redirect or a page's `next` link to another host is not followed: requests keeps the
    `PRIVATE-TOKEN` header on a redirect, and python-gitlab follows any `next` link."""
    with served_handler(_Leading) as gitlab_side, served_handler(_Leading) as other:
        _Leading.elsewhere, _Leading.heard = other, []
        client = GitLabClient(make_settings(gitlab_side), lambda: BOT_TOKEN)
        with pytest.raises(PermanentCallbackError, match="unusable"):
            client.can_write("group/widgets", "alice")
        listed = client.open_merge_requests("group/widgets", "main")
        assert len(listed) == 500  # five pages counted, none of them `next`'s
        assert _Leading.heard == []


@pytest.mark.parametrize(
    ("call", "answer"),
    [
        ("note", b"{}"),
        ("note", b'{"id": "x"}'),
        ("merge_request", b"{}"),
        ("merge_request", b'{"iid": 1, "web_url": null, "source_branch": "b"}'),
        ("notes", b'[{"id": "x"}]'),
        ("notes", b'[{"id": 1, "author": "alice"}]'),
        ("user", b"{}"),
    ],
)
def test_an_answer_of_the_wrong_shape_is_an_unusable_answer(call: str, answer: bytes) -> None:
    """JSON without what the call reads fails once as GitLab's unusable answer, never as the
    client's own KeyError, AttributeError or ValueError."""
    with served_answer(answer) as url:
        client = GitLabClient(make_settings(url), lambda: BOT_TOKEN)
        calls: dict[str, Callable[[], object]] = {
            "note": lambda: client.post_note(1, "issue", 7, "Queued"),
            "merge_request": lambda: client.get_merge_request(1, 7),
            "notes": lambda: client.notes(1, "issue", 7),
            "user": client.current_username,
        }
        with pytest.raises(PermanentCallbackError, match="unusable"):
            calls[call]()


def test_an_error_answer_to_a_job_log_is_read_only_as_far_as_its_message() -> None:
    """A 500 of 256 MB to a job's log: its first few KB are the message, and the rest is never
    read (python-gitlab kept the whole body as the error's message)."""
    size = 256 * 1024 * 1024
    with served_flood(500, size) as (url, flood):
        client = GitLabClient(make_settings(url), lambda: BOT_TOKEN)
        with pytest.raises(TransientCallbackError, match="500") as failed:
            client.job_trace_tail(1, 2, keep=1024, budget=1024 * 1024)
    assert flood.sent < size // 4
    assert len(str(failed.value)) < 1000


def test_a_job_log_is_read_only_as_far_as_the_budget() -> None:
    """A log of 256 MB: the budget's worth is read and its end kept (python-gitlab read the
    whole answer before the first chunk, as the call was not streamed)."""
    size = 256 * 1024 * 1024
    with served_flood(200, size) as (url, flood):
        client = GitLabClient(make_settings(url), lambda: BOT_TOKEN)
        assert client.job_trace_tail(1, 2, keep=1024, budget=1024 * 1024) == b"x" * 1024
    assert flood.sent < size // 4
