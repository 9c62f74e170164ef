"""Atlassian's OAuth 2.0 authorization code grant (3LO) and its `/me` on loopback: the person
signed in to Atlassian approves an app, which trades the code for an access token that
`GET /me` then answers for. One server stands in for both auth.atlassian.com and
api.atlassian.com.

    atlassian = AtlassianOAuth()
    atlassian.add_oauth_app("client-id", "a-secret")
    atlassian.sign_in_as("5b10ac8d82e05b22cc7d4ef5", name="Ada")
    GET  /authorize?audience=api.atlassian.com&client_id=…&scope=read:me&redirect_uri=…
                   &state=…&response_type=code&prompt=consent        302 → ?code&state
    POST /oauth/token   grant_type=authorization_code, client_id, client_secret, code, redirect_uri
    GET  /me            Authorization: Bearer …

A code is good once, for ten minutes. Errors are Atlassian's (an Auth0 server): a refused
client is 401 `access_denied`, a bad code 403 `invalid_grant`.
https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/
https://developer.atlassian.com/cloud/confluence/oauth-2-3lo-apps/#how-do-i-retrieve-the-public-profile-of-the-authenticated-user-
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from integrations.standin.oauth_codes import CodeFlow
from integrations.standin.server import (
    Reply,
    StandIn,
    WebHandler,
    html_page,
    redirect,
    web_params,
    with_query,
)

AUDIENCE: Final = "api.atlassian.com"
TOKEN_LIFETIME: Final = 3600
DESCRIPTIONS: Final = {
    "access_denied": "Unauthorized",
    "unsupported_grant_type": "Unsupported grant type",
    "invalid_grant": "Invalid authorization code",
}


@dataclass(frozen=True)
class Account:
    account_id: str
    name: str


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    status: int


class AtlassianOAuth(CodeFlow[Account], StandIn[Recorded]):
    """The code flow's state (`CodeFlow`), the tokens it issued, and the server."""

    def __init__(self) -> None:
        CodeFlow.__init__(self)
        self.tokens: dict[str, Account] = {}
        StandIn.__init__(self)

    @property
    def url(self) -> str:
        return self.origin

    def add_oauth_app(self, client_id: str, secret: str) -> None:
        self.apps[client_id] = secret

    def sign_in_as(self, account_id: str, *, name: str | None = None) -> None:
        """Who the browser is signed in to Atlassian as; they approve every app."""
        self.signed_in = Account(account_id, name or account_id)

    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw: bytes) -> Reply:
        path = urlsplit(raw_path).path
        route = ROUTES.get(f"{method} {path}")
        with self.lock:
            if route is None:
                reply: Reply = 404, {"code": 404, "message": "Not Found"}, {}
            else:
                reply = route(self, web_params(raw_path, headers, raw), headers)
            self.requests.append(Recorded(method, path, reply[0]))
            return reply


def authorize(atlassian: AtlassianOAuth, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /authorize`: back to the redirect_uri with a code and the state."""
    client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
    if client_id not in atlassian.apps or not redirect_uri:
        return html_page(400, "Something went wrong", "Unknown client_id or no redirect_uri.")
    if params.get("audience") != AUDIENCE or params.get("response_type") != "code":
        return html_page(400, "Something went wrong", "audience or response_type is wrong.")
    if params.get("prompt") != "consent":
        return html_page(400, "Something went wrong", "prompt=consent is required.")
    code = atlassian.approve(params)
    if code is None:
        return html_page(200, "Log in to continue", "Nobody is signed in: log in to continue.")
    state = {"state": params["state"]} if "state" in params else {}
    return redirect(with_query(redirect_uri, {"code": code} | state))


def token(atlassian: AtlassianOAuth, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`POST /oauth/token`: the client's id and secret in the body (JSON or form), then a code
    traded once for an access token."""
    client_id = params.get("client_id", "")
    if not atlassian.client_ok(client_id, params.get("client_secret", "")):
        return 401, {"error": "access_denied", "error_description": "Unauthorized"}, {}
    if params.get("grant_type") != "authorization_code":
        return (
            403,
            {"error": "unsupported_grant_type", "error_description": "Unsupported grant type"},
            {},
        )
    grant = atlassian.redeem(params.get("code", ""), client_id, params.get("redirect_uri"))
    if grant is None:
        return (
            403,
            {"error": "invalid_grant", "error_description": "Invalid authorization code"},
            {},
        )
    access = secrets.token_urlsafe(32)
    atlassian.tokens[access] = grant.who
    answer = {
        "access_token": access,
        "expires_in": TOKEN_LIFETIME,
        "scope": grant.scope,
        "token_type": "Bearer",
    }
    return 200, answer, {}


def _error(status: int, error: str) -> Reply:
    return status, {"error": error, "error_description": DESCRIPTIONS[error]}, {}


def me(atlassian: AtlassianOAuth, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /me`: the account's public profile."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    who = atlassian.tokens.get(value) if scheme == "Bearer" else None
    if who is None:
        return 401, {"code": 401, "message": "Unauthorized"}, {}
    profile: dict[str, Any] = {
        "account_type": "atlassian",
        "account_id": who.account_id,
        "email": f"{who.name.lower()}@example.com",
        "name": who.name,
        "picture": "https://avatar-management.services.atlassian.com/default/48",
        "account_status": "active",
        "nickname": who.name,
        "zoneinfo": "Europe/London",
        "locale": "en-GB",
        "extended_profile": {"job_title": "Engineer"},
    }
    return 200, profile, {}


ROUTES: Final[dict[str, WebHandler]] = {
    "GET /authorize": authorize,
    "POST /oauth/token": token,
    "GET /me": me,
}
