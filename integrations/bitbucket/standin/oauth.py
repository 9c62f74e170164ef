"""Bitbucket Cloud's OAuth 2.0 on the web address: the person signed in grants an OAuth
consumer access, which trades the code for an access token and a refresh token; the REST API
then accepts the access token (`Authorization: Bearer`) as that person.

    api.oauth.add_consumer("key", "secret", "https://resolver.example/signin/bitbucket/done")
    api.oauth.signed_in = "alice"                         # who the browser is on Bitbucket
    GET  /site/oauth2/authorize?client_id=…&response_type=code&state=…
    POST /site/oauth2/access_token    grant_type=authorization_code | refresh_token

As Bitbucket documents it: the consumer authenticates with HTTP Basic (its key and secret);
a consumer's callback URL is where a grant goes back to, and a `redirect_uri` off it is
refused; access tokens last two hours, a refresh keeps the refresh token. Every token error
is a 400 with RFC 6749's `error`.
https://developer.atlassian.com/cloud/bitbucket/oauth-2/
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from integrations.standin.oauth_codes import CodeFlow
from integrations.standin.server import Reply, basic_credentials, html_page, redirect, with_query

if TYPE_CHECKING:
    from integrations.bitbucket.standin.api import BitbucketAPI

TOKEN_LIFETIME: Final = 7200  # seconds


@dataclass
class OAuthConsumers(CodeFlow[str]):
    """The consumers (key -> secret, and their callback URLs), who is signed in (a nickname),
    the codes not yet traded, and the live tokens with when they were issued."""

    callbacks: dict[str, str] = field(default_factory=dict)
    issued: dict[str, float] = field(default_factory=dict)  # access token -> when
    refresh_tokens: dict[str, str] = field(default_factory=dict)  # refresh -> access token

    def add_consumer(self, key: str, secret: str, callback: str) -> None:
        self.apps[key] = secret
        self.callbacks[key] = callback

    def expired(self, access_token: str) -> bool:
        issued = self.issued.get(access_token)
        return issued is not None and self.clock() - issued >= TOKEN_LIFETIME


def authorize(api: BitbucketAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /site/oauth2/authorize`: back to the consumer's callback with a code and the state."""
    oauth = api.oauth
    if oauth.signed_in is None:
        return redirect(f"{api.url}/account/signin/")
    key = params.get("client_id", "")
    if key not in oauth.apps:
        return html_page(400, "Invalid client", "Invalid client_id")
    callback = params.get("redirect_uri") or oauth.callbacks[key]
    if not callback.startswith(oauth.callbacks[key]):
        return html_page(400, "Invalid redirect", "redirect_uri does not match the callback URL")
    state = {"state": params.get("state", "")}
    if params.get("response_type") != "code":
        return redirect(with_query(callback, {"error": "unsupported_response_type"} | state))
    code = oauth.approve(params | {"redirect_uri": params.get("redirect_uri", "")})
    return redirect(with_query(callback, {"code": code or ""} | state))


def access_token(api: BitbucketAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`POST /site/oauth2/access_token`: the consumer authenticates, then trades a code or a
    refresh token."""
    oauth = api.oauth
    key, secret = basic_credentials(headers) or (
        params.get("client_id", ""),
        params.get("client_secret", ""),
    )
    if not oauth.client_ok(key, secret):
        return _error("invalid_client", "Invalid OAuth client credentials")
    grant_type = params.get("grant_type", "")
    if grant_type == "authorization_code":
        grant = oauth.redeem(params.get("code", ""), key, params.get("redirect_uri", ""))
        nickname = grant.who if grant is not None else None
        return _issue(api, nickname, None)
    if grant_type == "refresh_token":
        refresh = params.get("refresh_token", "")
        return _issue(api, _refreshed(api, refresh), refresh)
    return _error("unsupported_grant_type", "Unsupported grant type")


def _refreshed(api: BitbucketAPI, refresh_token: str) -> str | None:
    access = api.oauth.refresh_tokens.pop(refresh_token, None)
    if access is None:
        return None
    api.oauth.issued.pop(access, None)
    return api.users[api.tokens.pop(access)]


def _issue(api: BitbucketAPI, nickname: str | None, refresh: str | None) -> Reply:
    if nickname is None:
        return _error("invalid_grant", "Invalid or expired grant")
    access, refresh = secrets.token_urlsafe(32), refresh or secrets.token_urlsafe(24)
    api.tokens[access] = api.add_user(nickname)
    api.oauth.issued[access] = api.oauth.clock()
    api.oauth.refresh_tokens[refresh] = access
    answer = {
        "access_token": access,
        "token_type": "bearer",
        "expires_in": TOKEN_LIFETIME,
        "refresh_token": refresh,
        "scopes": "account pullrequest",
    }
    return 200, answer, {}


def _error(error: str, description: str) -> Reply:
    return 400, {"error": error, "error_description": description}, {}


def sign_in_page(api: BitbucketAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    return html_page(200, "Log in to Bitbucket", "Log in to continue.")


OAUTH_ROUTES = {
    "GET /site/oauth2/authorize": authorize,
    "POST /site/oauth2/access_token": access_token,
    "GET /account/signin/": sign_in_page,
}
