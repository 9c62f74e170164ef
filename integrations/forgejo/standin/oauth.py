"""Forgejo's OAuth2 provider on the instance URL: the person signed in approves an application,
which trades the code for an access token and a refresh token; the REST API then accepts the
access token (`Authorization: Bearer`) as that person.

    api.oauth.add_app("0c6f…", "gto_…", "https://resolver.example/signin/forgejo/done")
    api.oauth.signed_in = "alice"                     # who the browser is on Forgejo
    GET  /login/oauth/authorize?client_id=…&redirect_uri=…&response_type=code&state=…
    POST /login/oauth/access_token    grant_type=authorization_code | refresh_token

As Forgejo does (routers/web/auth/oauth.go): a redirect URI must be one registered with the
application; a request Forgejo cannot send back is a 400 page, one it can goes back to the
redirect URI with `error`; nobody signed in is sent to `/user/login` first. Every token error
is a 400 with RFC 6749's `error`. A confidential application approved once is approved again
at once, which is what the stand-in assumes. Access tokens last an hour (its default
`ACCESS_TOKEN_EXPIRATION_TIME`); a refresh replaces both tokens.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from integrations.standin.oauth_codes import CodeFlow
from integrations.standin.server import (
    Reply,
    WebHandler,
    basic_credentials,
    html_page,
    redirect,
    with_query,
)

if TYPE_CHECKING:
    from integrations.forgejo.standin.api import ForgejoAPI

TOKEN_LIFETIME: Final = 3600  # seconds


@dataclass
class OAuthApps(CodeFlow[str]):
    """The applications (client id -> secret, and their redirect URIs), who is signed in (a
    login), the codes not yet traded, and the live tokens with when they were issued."""

    redirect_uris: dict[str, tuple[str, ...]] = field(default_factory=dict)
    issued: dict[str, float] = field(default_factory=dict)  # access token -> when
    refresh_tokens: dict[str, str] = field(default_factory=dict)  # refresh -> access token

    def add_app(self, client_id: str, secret: str, *redirect_uris: str) -> None:
        self.apps[client_id] = secret
        self.redirect_uris[client_id] = redirect_uris

    def expired(self, access_token: str) -> bool:
        issued = self.issued.get(access_token)
        return issued is not None and self.clock() - issued >= TOKEN_LIFETIME


def authorize(api: ForgejoAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /login/oauth/authorize`: back to the redirect URI with a code and the state."""
    oauth = api.oauth
    if oauth.signed_in is None:
        return redirect(f"{api.url}/user/login")
    client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
    if client_id not in oauth.apps:
        return html_page(400, "Authorization failed", "Client ID not registered")
    if redirect_uri not in oauth.redirect_uris[client_id]:
        return html_page(400, "Authorization failed", "Unregistered Redirect URI")
    state = {"state": params.get("state", "")}
    if params.get("response_type") != "code":
        refusal = {"error": "unsupported_response_type"}
        return redirect(with_query(redirect_uri, refusal | state))
    code = oauth.approve(params)
    return redirect(with_query(redirect_uri, {"code": code or ""} | state))


def sign_in_page(api: ForgejoAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    return html_page(200, "Sign in - Forgejo", "Sign in to continue.")


def access_token(api: ForgejoAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`POST /login/oauth/access_token`: the client authenticates (in the form, or HTTP Basic),
    then trades a code or a refresh token."""
    oauth = api.oauth
    client_id, secret = params.get("client_id", ""), params.get("client_secret", "")
    if not client_id or not secret:
        client_id, secret = basic_credentials(headers) or (client_id, secret)
    if not oauth.client_ok(client_id, secret):
        return _error("invalid_client", "invalid client secret")
    grant_type = params.get("grant_type", "")
    if grant_type == "authorization_code":
        grant = oauth.redeem(params.get("code", ""), client_id, params.get("redirect_uri"))
        login = grant.who if grant is not None else None
    elif grant_type == "refresh_token":
        login = _refreshed(api, params.get("refresh_token", ""))
    else:
        return _error("unsupported_grant_type", "Only refresh_token or authorization_code")
    if login is None:
        return _error("invalid_grant", "invalid grant")
    return _issue(api, login)


def _refreshed(api: ForgejoAPI, refresh_token: str) -> str | None:
    """The login of a live refresh token, whose tokens are replaced; None for any other."""
    access = api.oauth.refresh_tokens.pop(refresh_token, None)
    if access is None:
        return None
    api.oauth.issued.pop(access, None)
    user_id = api.tokens.pop(access)
    return api.users[user_id]


def _issue(api: ForgejoAPI, login: str) -> Reply:
    access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    api.tokens[access] = api.add_user(login)
    api.oauth.issued[access] = api.oauth.clock()
    api.oauth.refresh_tokens[refresh] = access
    answer = {
        "access_token": access,
        "token_type": "bearer",
        "expires_in": TOKEN_LIFETIME,
        "refresh_token": refresh,
    }
    return 200, answer, {}


def _error(error: str, description: str) -> Reply:
    return 400, {"error": error, "error_description": description}, {}


OAUTH_ROUTES: Final[dict[str, WebHandler]] = {
    "GET /login/oauth/authorize": authorize,
    "POST /login/oauth/access_token": access_token,
    "GET /user/login": sign_in_page,
}
