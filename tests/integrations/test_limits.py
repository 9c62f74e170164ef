"""A provider's answer is read within its call's deadline and up to its cap (integrations/toolkit/
limits.py), against a real loopback server that drips, floods or sends a gzip bomb: the call
fails in time with the provider's typed error, and memory never holds more than the cap."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from functools import cache
from http.server import BaseHTTPRequestHandler

import pytest

from integrations.bitbucket.client import BitbucketClient
from integrations.bitbucket.pipelines import PipelinesClient
from integrations.forgejo.client import ForgejoClient
from integrations.github.api import github_session, translate_errors
from integrations.github.client import GitHubClient
from integrations.gitlab.api import Connection
from integrations.gitlab.api import translate_errors as gitlab_errors
from integrations.gitlab.client import GitLabClient
from integrations.jira.client import JiraClient, jira_session
from integrations.jira.client import translate_errors as jira_errors
from integrations.linear.client import LinearClient
from integrations.slack.client import SlackClient, slack_session
from integrations.slack.client import translate_errors as slack_errors
from integrations.slack.signin import whoami
from integrations.toolkit import oauth
from integrations.toolkit.answers import fields, items
from integrations.toolkit.http import JsonCalls
from integrations.toolkit.limits import MAX_ANSWER_BYTES, Limits
from resolver.contract.errors import HttpErrors, PermanentCallbackError, TransientCallbackError
from resolver.contract.signin import ForgeUnreachableError, OAuthClient
from tests.integrations.github.conftest import make_settings
from tests.integrations.gitlab.conftest import make_settings as gitlab_settings
from tests.integrations.slack.conftest import make_settings as slack_settings
from tests.support.serving import EchoProxy, served_handler

SHORT = Limits(seconds=0.5)
CALLS = JsonCalls(HttpErrors("Forge"), limits=Limits(max_bytes=32 * 1024))
OVER_CAP = MAX_ANSWER_BYTES + 1024 * 1024
# The drip lasts 10 s: a call that ends within this ended at its deadline.
WITHIN = 4.0


@cache
def gzip_bomb() -> bytes:
    """A JSON list padded with spaces past the cap, which gzip shrinks a thousandfold."""
    return gzip.compress(b"[" + b" " * OVER_CAP + b"]", compresslevel=9)


class Hostile(BaseHTTPRequestHandler):
    """By the path's first folder, `/drip`: a byte every 0.1 s for 10 s; `/headers`: a status
    line, then a header a byte every 0.2 s for 10 s; `/huge`: a body past the cap; `/bomb`: gzip
    that decodes past it; `/small`: a JSON list, gzipped as asked."""

    def do_GET(self) -> None:
        try:
            self._answer()
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up, as it should

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            self._answer()
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up, as it should

    def _answer(self) -> None:
        if self.path.startswith("/headers"):
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for byte in b"X-Drip: " + b"a" * 42:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.2)
            return
        body, encoding = {
            "/drip": (b"[" + b" " * 98 + b"]", None),
            "/huge": (b"[" + b" " * OVER_CAP + b"]", None),
            "/bomb": (gzip_bomb(), "gzip"),
            "/small": (gzip.compress(json.dumps([{"id": 1}]).encode()), "gzip"),
        }["/" + self.path.split("/")[1].partition("?")[0]]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path.startswith("/drip"):
            for byte in range(len(body)):
                self.wfile.write(body[byte : byte + 1])
                self.wfile.flush()
                time.sleep(0.1)
            return
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return None


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    with served_handler(Hostile) as url:
        yield url


def test_an_answer_that_drips_fails_at_the_calls_deadline(hostile: str) -> None:
    started = time.monotonic()
    with pytest.raises(TransientCallbackError, match="did not answer GET /drip in time"):
        JsonCalls(HttpErrors("Forge"), limits=SHORT).send(
            "GET", "GET /drip", hostile + "/drip", headers={}
        )
    assert time.monotonic() - started < WITHIN  # each byte came within the per-read timeout


def test_headers_that_drip_fail_at_the_calls_deadline(hostile: str) -> None:
    started = time.monotonic()
    with pytest.raises(TransientCallbackError, match="did not answer GET /headers in time"):
        JsonCalls(HttpErrors("Forge"), limits=Limits(seconds=1)).send(
            "GET", "GET /headers", hostile + "/headers", headers={}
        )
    assert time.monotonic() - started < WITHIN  # each byte came within the per-read timeout


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_an_answer_past_the_cap_is_unusable(hostile: str, path: str) -> None:
    with pytest.raises(PermanentCallbackError, match="unusable: AnswerTooLargeError"):
        CALLS.send("GET", f"GET {path}", hostile + path, headers={})


def test_an_answer_within_the_cap_is_read_and_decoded(hostile: str) -> None:
    answer = CALLS.send("GET", "GET /small", hostile + "/small", headers={})
    assert CALLS.read("GET /small", answer, items) == [{"id": 1}]


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_a_forge_client_reads_no_more_than_the_cap(hostile: str, path: str) -> None:
    client = ForgejoClient(hostile + path, lambda: "token")
    too_large = r"Forgejo's answer .* unusable: AnswerTooLargeError"
    with pytest.raises(PermanentCallbackError, match=too_large):
        client.issue_comments("o/r", 1)


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_a_rest_client_on_httpx_reads_no_more_than_the_cap(hostile: str, path: str) -> None:
    client = BitbucketClient(hostile + path, lambda: "token")
    with pytest.raises(PermanentCallbackError, match="unusable: AnswerTooLargeError"):
        client.authenticated_user()


def test_githubkit_is_held_to_its_timeout_for_the_whole_call(hostile: str) -> None:
    github = github_session(make_settings(hostile + "/drip", None), "token", timeout=0.5)
    started = time.monotonic()
    with pytest.raises(TransientCallbackError, match="in time"), translate_errors("GET /user"):
        github.rest.users.get_authenticated()
    assert time.monotonic() - started < WITHIN


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_githubkit_reads_no_more_than_the_cap(hostile: str, path: str) -> None:
    client = GitHubClient(make_settings(hostile + path, None), lambda: "token")
    with pytest.raises(PermanentCallbackError, match="unusable: AnswerTooLargeError"):
        client.post_comment("o/r", 1, "hi")


def test_python_gitlab_is_held_to_the_calls_deadline(hostile: str) -> None:
    connection = Connection(gitlab_settings(hostile + "/drip"), "token", SHORT)
    started = time.monotonic()
    with pytest.raises(TransientCallbackError), gitlab_errors("GET /user", dict):
        connection.api.http_get("/user")
    assert time.monotonic() - started < WITHIN


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_python_gitlab_reads_no_more_than_the_cap(hostile: str, path: str) -> None:
    client = GitLabClient(gitlab_settings(hostile + path), lambda: "token")
    with pytest.raises(PermanentCallbackError, match="unusable: AnswerTooLargeError"):
        client.current_username()


def test_a_gitlab_jobs_log_is_read_up_to_its_own_budget(hostile: str) -> None:
    client = GitLabClient(gitlab_settings(hostile + "/huge"), lambda: "token")
    assert client.job_trace_tail("g/p", 1, 16, OVER_CAP + 2) == b" " * 15 + b"]"


def test_the_jira_library_is_held_to_the_calls_deadline(hostile: str) -> None:
    jira = jira_session(hostile + "/drip", "person@example.com:token", SHORT)
    started = time.monotonic()
    with pytest.raises(TransientCallbackError, match="in time"), jira_errors("GET /issue"):
        jira.issue("K-1")
    assert time.monotonic() - started < WITHIN


def test_requests_clients_are_held_to_the_deadline_while_the_headers_drip(hostile: str) -> None:
    one_second = Limits(seconds=1)
    jira = jira_session(hostile + "/headers", "person@example.com:token", one_second)
    started = time.monotonic()
    with pytest.raises(TransientCallbackError, match="in time"), jira_errors("GET /issue"):
        jira.issue("K-1")
    assert time.monotonic() - started < WITHIN
    connection = Connection(gitlab_settings(hostile + "/headers"), "token", one_second)
    started = time.monotonic()
    late = pytest.raises(TransientCallbackError, match="ReadTimeout")
    with late, gitlab_errors("GET /user", dict):
        connection.api.http_get("/user")
    assert time.monotonic() - started < WITHIN


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_the_jira_library_reads_no_more_than_the_cap(hostile: str, path: str) -> None:
    client = JiraClient(hostile + path, "person@example.com:token")
    with pytest.raises(PermanentCallbackError, match="unusable: AnswerTooLargeError"):
        client.issue("K-1")


def test_a_graphql_client_on_httpx_holds_its_timeout_for_the_whole_call(hostile: str) -> None:
    started = time.monotonic()
    with pytest.raises(TransientCallbackError, match="did not answer Viewer in time"):
        LinearClient(hostile + "/drip", "lin_api_key", timeout=0.5).query("Viewer", "{ viewer }")
    assert time.monotonic() - started < WITHIN
    with pytest.raises(PermanentCallbackError, match="unusable: AnswerTooLargeError"):
        LinearClient(hostile + "/bomb", "lin_api_key").query("Viewer", "{ viewer }")


def test_a_logs_tail_is_read_up_to_its_own_budget_past_the_api_cap(hostile: str) -> None:
    client = PipelinesClient(hostile + "/huge", lambda: "token")
    kept, cut = client.step_log_tail("w/r", "{p}", "{s}", 16, OVER_CAP + 2)
    assert (kept, cut) == (b" " * 15 + b"]", True)


def test_a_sign_in_call_that_drips_fails_at_its_deadline(hostile: str) -> None:
    started = time.monotonic()
    with pytest.raises(ForgeUnreachableError, match="did not answer: ReadTimeout"):
        oauth.viewer_get("Forge", hostile + "/drip", "token t", limits=SHORT)
    assert time.monotonic() - started < WITHIN


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_a_sign_in_answer_past_the_cap_is_no_answer(hostile: str, path: str) -> None:
    with pytest.raises(ForgeUnreachableError, match="did not answer: AnswerTooLargeError"):
        oauth.viewer_get("Forge", hostile + path, "token t")
    client = OAuthClient("id", "secret", hostile, hostile + path, "scope")
    with pytest.raises(ForgeUnreachableError, match="did not answer: AnswerTooLargeError"):
        oauth.refresh_grant(oauth.RefreshGrant("Forge"), client, "refresh")


def test_a_sign_in_of_its_own_reads_no_more_than_the_cap(hostile: str) -> None:
    with pytest.raises(ForgeUnreachableError, match="did not answer: AnswerTooLargeError"):
        whoami(slack_settings(hostile + "/bomb"), "xoxp-token")


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
def test_the_slack_sdk_reads_no_more_than_the_cap(hostile: str, path: str) -> None:
    client = SlackClient(slack_settings(hostile + path), "xoxb-token")
    with pytest.raises(PermanentCallbackError, match="unusable: UnreadableAnswerError"):
        client.identity()


def test_the_slack_sdk_is_held_to_its_timeout_for_the_whole_call(hostile: str) -> None:
    session = slack_session(slack_settings(hostile + "/drip"), "xoxb-token", timeout=1)
    started = time.monotonic()
    with pytest.raises(TransientCallbackError, match="TimeoutError"), slack_errors("auth.test"):
        session.auth_test()
    assert time.monotonic() - started < WITHIN


class Chunked(BaseHTTPRequestHandler):
    """A gzip JSON object in chunks of 7 bytes (`Transfer-Encoding: chunked`), as GitLab and
    most proxies send an answer of unknown length."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = gzip.compress(json.dumps({"id": 7, "username": "bot" * 5000}).encode())
        self.send_response(200)
        for name, value in [("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                            ("Transfer-Encoding", "chunked"), ("Connection", "close")]:  # fmt: skip
            self.send_header(name, value)
        self.end_headers()
        for start in range(0, len(body), 7):
            part = body[start : start + 7]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *_args: object) -> None:
        return None


def test_a_chunked_gzip_answer_within_the_cap_is_read_whole() -> None:
    with served_handler(Chunked) as url:
        answer = CALLS.send("GET", "GET /user", url + "/user", headers={})
        assert CALLS.read("GET /user", answer, fields)["username"] == "bot" * 5000
        client = GitLabClient(gitlab_settings(url), lambda: "token")
        assert client.current_username() == "bot" * 5000


def test_a_call_goes_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Given a transport, httpx reads no proxy from the environment: the bounded one does."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    with served_handler(EchoProxy) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy)
        answer = CALLS.send("GET", "GET /x", "http://forge.invalid/x", headers={})
    assert CALLS.read("GET /x", answer, fields)["asked"] == "http://forge.invalid/x"
