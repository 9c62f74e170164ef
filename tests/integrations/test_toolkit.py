"""What the forges share (integrations/toolkit/), against a scripted loopback server: how the
refresh grant is sent and what each kind of refusal becomes, how a GET as the viewer fails, and
how a JSON call's error answer is classified and worded. Each forge's own suite covers it too,
through its stand-in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs

import pytest
from pydantic import SecretStr

from integrations.standin.server import Loopback, LoopbackHandler
from integrations.toolkit import oauth
from integrations.toolkit.http import JsonCalls
from resolver.contract.errors import HttpErrors, PermanentCallbackError, TransientCallbackError
from resolver.contract.signin import (
    ForgeUnreachableError,
    OAuthClient,
    RefreshRefusedError,
    SignInError,
)


class Scripted(Loopback):
    """Answers every request with `status` and `body`, and keeps what it was sent."""

    def __init__(self) -> None:
        self.status, self.body = 200, b"{}"
        self.sent: list[tuple[str, dict[str, str], str]] = []
        super().__init__(ScriptedHandler)

    def answer_with(self, status: int, body: object) -> None:
        self.status, self.body = status, json.dumps(body).encode()


class ScriptedHandler(LoopbackHandler):
    def answer(self) -> None:
        owner = self.server.owner
        assert isinstance(owner, Scripted)
        length = int(self.headers.get("Content-Length") or 0)
        owner.sent.append((self.path, dict(self.headers), self.rfile.read(length).decode()))
        self.send_response(owner.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(owner.body)))
        self.end_headers()
        self.wfile.write(owner.body)


@pytest.fixture
def forge() -> Iterator[Scripted]:
    with Scripted() as server:
        yield server


def _client(forge: Scripted) -> OAuthClient:
    found = oauth.configured_client(
        "app-id",
        SecretStr("app-secret"),
        forge.origin + "/",
        authorize="/authorize",
        token="/token",
        scope="read",
    )
    assert found is not None and found.access_token_url == forge.origin + "/token"
    return found


def test_a_client_without_its_secret_or_address_is_not_configured() -> None:
    secret = SecretStr("s")
    options = {"authorize": "/a", "token": "/t", "scope": ""}
    assert oauth.configured_client("id", None, "https://forge.example", **options) is None
    assert oauth.configured_client("id", secret, None, **options) is None
    assert oauth.configured_client("", secret, "https://forge.example", **options) is None
    with pytest.raises(ForgeUnreachableError, match="Forge sign-in is not configured"):
        oauth.refresh_grant(oauth.RefreshGrant("Forge"), None, "r1")


def test_the_grant_sends_the_client_in_the_form_or_by_basic(forge: Scripted) -> None:
    forge.answer_with(200, {"access_token": "a2", "refresh_token": "r2", "expires_in": 3600})
    issued = oauth.refresh_grant(
        oauth.RefreshGrant("Forge", form={"scope": "x"}), _client(forge), "r1"
    )
    assert (issued.access_token, issued.refresh_token, issued.expires_in) == ("a2", "r2", 3600)
    oauth.refresh_grant(oauth.RefreshGrant("Forge", basic_auth=True), _client(forge), "r1")
    (_, _, in_form), (_, headers, by_basic) = forge.sent
    assert parse_qs(in_form) == {
        "client_id": ["app-id"],
        "client_secret": ["app-secret"],
        "grant_type": ["refresh_token"],
        "refresh_token": ["r1"],
        "scope": ["x"],
    }
    assert parse_qs(by_basic) == {"grant_type": ["refresh_token"], "refresh_token": ["r1"]}
    assert headers["Authorization"].startswith("Basic ")


@pytest.mark.parametrize(
    ("grant", "status", "answer", "refused"),
    [
        (oauth.RefreshGrant("Forge"), 400, {"error": "invalid_grant"}, True),
        (oauth.RefreshGrant("Forge"), 401, {"error": "unauthorized_client"}, True),
        (oauth.RefreshGrant("Forge"), 400, {"error": "invalid_request"}, False),
        (oauth.RefreshGrant("Forge"), 200, {"token_type": "bearer"}, False),
        # GitLab: only a 400 `invalid_grant` refuses the refresh token itself.
        (
            oauth.RefreshGrant(
                "Forge", refusals=frozenset({"invalid_grant"}), refusal_statuses=frozenset({400})
            ),
            401,
            {"error": "invalid_grant"},
            False,
        ),
        # GitHub: a refusal comes with 200.
        (
            oauth.RefreshGrant(
                "Forge", refusals=frozenset({"bad_refresh_token"}), refusal_statuses=None
            ),
            200,
            {"error": "bad_refresh_token"},
            True,
        ),
        (oauth.RefreshGrant("Forge"), 200, {"error": "slow_down", "access_token": "a"}, False),
    ],
)
def test_a_refusal_is_told_from_a_failure(
    forge: Scripted, grant: oauth.RefreshGrant, status: int, answer: object, refused: bool
) -> None:
    forge.answer_with(status, answer)
    expected = RefreshRefusedError if refused else ForgeUnreachableError
    with pytest.raises(expected) as raised:
        oauth.refresh_grant(grant, _client(forge), "r1")
    if not refused:
        assert str(raised.value).startswith(f"Forge did not renew the token ({status} ")


@pytest.mark.parametrize(
    ("status", "error"),
    [(401, SignInError), (203, SignInError), (502, ForgeUnreachableError)],
)
def test_a_viewer_get_that_fails_says_why(
    forge: Scripted, status: int, error: type[Exception]
) -> None:
    forge.answer_with(status, {})
    with pytest.raises(error):
        oauth.viewer_get(
            "Forge", forge.origin + "/user", "Bearer t", signed_out=frozenset({401, 203})
        )


def test_a_repository_hidden_from_the_viewer_is_no_answer(forge: Scripted) -> None:
    forge.answer_with(404, {})
    response = oauth.viewer_get("Forge", forge.origin + "/repos/o/r", "Bearer t")
    assert oauth.repo_answer("Forge", response, "o/r") is None
    forge.answer_with(400, {})
    response = oauth.viewer_get("Forge", forge.origin + "/repos/o/r", "Bearer t")
    with pytest.raises(ForgeUnreachableError, match="Forge answered 400 for o/r"):
        oauth.repo_answer("Forge", response, "o/r")


def test_a_json_call_words_the_vendors_error_and_treats_its_sign_in_page_as_401(
    forge: Scripted,
) -> None:
    calls = JsonCalls(
        HttpErrors("Forge"), detail=("error", "message"), sign_in_page=frozenset({203})
    )
    forge.answer_with(404, {"error": {"message": "Repository not found"}})
    with pytest.raises(PermanentCallbackError) as raised:
        calls.send("GET", "GET /r", forge.origin + "/r", headers={})
    assert str(raised.value) == "Forge answered 404 to GET /r: Repository not found"
    forge.answer_with(203, {})
    with pytest.raises(PermanentCallbackError) as raised:
        calls.send("GET", "GET /r", forge.origin + "/r", headers={})
    assert raised.value.status == 401
    forge.answer_with(503, {})
    with pytest.raises(TransientCallbackError):
        calls.send("GET", "GET /r", forge.origin + "/r", headers={})
