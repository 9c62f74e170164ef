"""A provider's answer that is no answer (a redirect to a login page, a body its encoding does
not describe, a wait of twenty digits) is the provider's error, never success and never an
error of the client's own: the callback says what happened and retries only what may pass."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from integrations.forgejo.client import ForgejoClient
from integrations.toolkit.oauth import RefreshGrant, refresh_grant
from resolver.contract.errors import MAX_RETRY_AFTER, PermanentCallbackError, parse_retry_after
from resolver.contract.signin import ForgeUnreachableError, OAuthClient, issued_token
from tests.support.serving import served_answer, served_handler


class _Hostile(BaseHTTPRequestHandler):
    def do_PATCH(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "/comments/1" in self.path:  # a write sent to the sign-in page
            self.send_response(302)
            self.send_header("Location", "/user/login")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)  # "gzip" that is not
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"not gzip!")

    def log_message(self, *_args: object) -> None:
        return None


@pytest.fixture
def hostile() -> Iterator[str]:
    with served_handler(_Hostile) as url:
        yield url


def test_a_write_answered_by_a_redirect_is_not_done(hostile: str) -> None:
    client = ForgejoClient(hostile, lambda: "token")
    with pytest.raises(PermanentCallbackError, match="302"):
        client.edit_comment("o/r", 1, "body")


def test_a_body_its_encoding_does_not_describe_is_an_unusable_answer(hostile: str) -> None:
    client = ForgejoClient(hostile, lambda: "token")
    with pytest.raises(PermanentCallbackError, match="unusable"):
        client.edit_comment("o/r", 2, "body")


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("120", 120.0), ("\u00b2", None), ("9" * 25, MAX_RETRY_AFTER), ("soon", None), ("", None)],
)
def test_a_wait_is_read_as_a_bounded_number_of_seconds(header: str, seconds: float | None) -> None:
    assert parse_retry_after(header) == seconds


class _TokenEndpoint(BaseHTTPRequestHandler):
    answers: list[bytes] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = type(self).answers.pop(0)
        self.send_response(400 if b"error" in body else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return None


def test_a_token_answer_of_the_wrong_shape_renews_nothing() -> None:
    """An `error` that is a list, an `access_token` of null: no token is stored as "None",
    and the renewal fails as the forge's, not as the client's own TypeError."""
    _TokenEndpoint.answers = [b'{"error": ["invalid_grant"]}', b'{"access_token": null}']
    with served_handler(_TokenEndpoint) as served:
        url = f"{served}/token"
        client = OAuthClient("id", "secret", url, url, "scope")
        for _ in range(2):
            with pytest.raises(ForgeUnreachableError, match="did not renew"):
                refresh_grant(RefreshGrant("Forgejo"), client, "refresh")
    with pytest.raises(KeyError):
        issued_token({"access_token": None, "refresh_token": "r"})


@pytest.mark.parametrize("answer", [b"[]", b"{}", b'{"id": null}', b"<html>login</html>"])
def test_a_new_comment_answered_without_its_id_is_an_unusable_answer(answer: bytes) -> None:
    with served_answer(answer) as url:
        client = ForgejoClient(url, lambda: "token")
        with pytest.raises(PermanentCallbackError, match="unusable"):
            client.post_comment("o/r", 1, "body")


@pytest.mark.parametrize("answer", [b'{"x": 1}', b"[1, 2]", b"null"])
def test_comments_that_are_no_list_of_objects_are_an_unusable_answer(answer: bytes) -> None:
    with served_answer(answer) as url:
        client = ForgejoClient(url, lambda: "token")
        with pytest.raises(PermanentCallbackError, match="unusable"):
            client.issue_comments("o/r", 1)
        with pytest.raises(PermanentCallbackError, match="unusable"):
            client.open_pulls("o/r", "main")


def test_a_repository_with_no_clone_url_is_an_unusable_answer() -> None:
    body = b'{"full_name": "o/r", "clone_url": null, "default_branch": "main"}'
    with served_answer(body) as url:
        client = ForgejoClient(url, lambda: "token")
        with pytest.raises(PermanentCallbackError, match="unusable"):
            client.repository("o/r")
