"""GitLab's OAuth 2.0 authorization code flow (Doorkeeper) on the instance URL: the person signed
in approves an application, which trades the code for an access token and a refresh token; the
REST API then accepts the access token (`Authorization: Bearer`) as that person.

    api.add_oauth_app("4f1c…", "gloas-…")
    api.sign_in_as("alice")                          # who the browser is on GitLab
    GET  /oauth/authorize?client_id=…&redirect_uri=…&response_type=code&state=…  302 → ?code&state
    POST /oauth/token    grant_type=authorization_code | refresh_token

Whoever is signed in approves every application at once (as after a first consent); nobody
signed in is sent to the sign-in page first, as GitLab does before it looks at the request.
A code is good once, for ten minutes; an access token for two hours. A refresh revokes both
the old access token and the old refresh token.
https://docs.gitlab.com/api/oauth2/ https://www.rfc-editor.org/rfc/rfc6749#section-5.2
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from integrations.standin.server import (
    Reply,
    WebHandler,
    basic_credentials,
    html_page,
    redirect,
    with_query,
)

if TYPE_CHECKING:
    from integrations.gitlab.standin.api import GitLabAPI

CODE_LIFETIME: Final = 600  # seconds
TOKEN_LIFETIME: Final = 7200
# Doorkeeper's descriptions of the errors the stand-in gives.
DESCRIPTIONS: Final = {
    "invalid_client": "Client authentication failed due to unknown client, no client "
    "authentication included, or unsupported authentication method.",
    "invalid_grant": "The provided authorization grant is invalid, expired, revoked, does not "
    "match the redirection URI used in the authorization request, or was issued to another "
    "client.",
    "invalid_redirect_uri": "The requested redirect uri is malformed or doesn't match client "
    "redirect URI.",
    "unsupported_grant_type": "The authorization grant type is not supported by the "
    "authorization server.",
    "unsupported_response_type": "The authorization server does not support this response type.",
}
EXPIRED: Final = {
    "error": "invalid_token",
    "error_description": "Token is expired. You can either do re-authorization or token refresh.",
}


@dataclass(frozen=True)
class Authorization:
    """An authorize request as the stand-in received it, and who was signed in (None: nobody)."""

    client_id: str
    redirect_uri: str
    scope: str
    state: str
    signed_in: str | None


@dataclass(frozen=True)
class Grant:
    """What a code or a token stands for: user `user_id`, for the application it was issued to."""

    client_id: str
    redirect_uri: str
    scope: str
    user_id: int
    issued_at: float


@dataclass
class OAuthWeb:
    """The applications (client id -> secret), who is signed in, the authorize requests in
    order, the codes not yet traded, and the live access and refresh tokens; `clock` ages codes
    and tokens (a test may move it on)."""

    apps: dict[str, str] = field(default_factory=dict)
    signed_in: str | None = None
    authorizations: list[Authorization] = field(default_factory=list)
    codes: dict[str, Grant] = field(default_factory=dict)
    access_tokens: dict[str, Grant] = field(default_factory=dict)
    refresh_tokens: dict[str, str] = field(default_factory=dict)  # refresh -> its access token
    clock: Callable[[], float] = time.time

    def expired(self, access_token: str) -> bool:
        """Whether `access_token` is one this flow issued, now over two hours old."""
        grant = self.access_tokens.get(access_token)
        return grant is not None and self.clock() - grant.issued_at >= TOKEN_LIFETIME


def authorize(api: GitLabAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /oauth/authorize`: back to the redirect_uri with a code and the state."""
    oauth = api.oauth
    client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
    state = {"state": params["state"]} if "state" in params else {}
    scope = params.get("scope", "")
    record = Authorization(client_id, redirect_uri, scope, params.get("state", ""), oauth.signed_in)
    oauth.authorizations.append(record)
    if oauth.signed_in is None:
        return redirect(f"{api.url}/users/sign_in")
    if client_id not in oauth.apps:
        return html_page(401, "An error has occurred", DESCRIPTIONS["invalid_client"])
    if not redirect_uri:
        return html_page(400, "An error has occurred", DESCRIPTIONS["invalid_redirect_uri"])
    if params.get("response_type") != "code":
        refusal = "unsupported_response_type"
        details = {"error": refusal, "error_description": DESCRIPTIONS[refusal]}
        return redirect(with_query(redirect_uri, details | state))
    code = secrets.token_hex(32)
    user_id = api.add_user(oauth.signed_in)
    oauth.codes[code] = Grant(client_id, redirect_uri, scope, user_id, oauth.clock())
    return redirect(with_query(redirect_uri, {"code": code} | state))


def sign_in_page(api: GitLabAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /users/sign_in`, where GitLab sends a browser nobody has signed in with."""
    return html_page(200, "Sign in · GitLab", "You need to sign in before continuing.")


def token(api: GitLabAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`POST /oauth/token`: the client authenticates (HTTP Basic or client_id and client_secret
    in the body), then trades a code or a refresh token for new tokens."""
    sent = (params.get("client_id", ""), params.get("client_secret", ""))
    client_id, secret = basic_credentials(headers) or sent
    if not secret or api.oauth.apps.get(client_id) != secret:
        return _error(401, "invalid_client")
    trade = GRANT_TYPES.get(params.get("grant_type", ""))
    if trade is None:
        return _error(400, "unsupported_grant_type")
    grant = trade(api, client_id, params)
    return _error(400, "invalid_grant") if grant is None else _issue(api, grant)


def _from_code(api: GitLabAPI, client_id: str, params: dict[str, str]) -> Grant | None:
    """The code's grant, used up; None if unknown, used, expired, another client's, or sent
    with another redirect_uri (or none)."""
    oauth, code = api.oauth, params.get("code", "")
    grant = oauth.codes.get(code)
    sent = (client_id, params.get("redirect_uri"))
    if grant is None or (grant.client_id, grant.redirect_uri) != sent:
        return None
    del oauth.codes[code]
    return grant if oauth.clock() - grant.issued_at <= CODE_LIFETIME else None


def _from_refresh(api: GitLabAPI, client_id: str, params: dict[str, str]) -> Grant | None:
    """The refresh token's grant, with the old access and refresh tokens revoked; None if
    unknown, used or another client's."""
    oauth = api.oauth
    access = oauth.refresh_tokens.get(params.get("refresh_token", ""), "")
    grant = oauth.access_tokens.get(access)
    if grant is None or grant.client_id != client_id:
        return None
    del oauth.refresh_tokens[params["refresh_token"]], oauth.access_tokens[access]
    del api.tokens[access]
    return grant


def _issue(api: GitLabAPI, grant: Grant) -> Reply:
    """A new access token (which the API then accepts) and its refresh token."""
    oauth, now = api.oauth, api.oauth.clock()
    access, refresh = secrets.token_hex(32), secrets.token_hex(32)
    oauth.access_tokens[access] = replace(grant, issued_at=now)
    oauth.refresh_tokens[refresh] = access
    api.tokens[access] = grant.user_id
    return (
        200,
        {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": TOKEN_LIFETIME,
            "refresh_token": refresh,
            "scope": grant.scope,
            "created_at": int(now),
        },
        {"Cache-Control": "no-store"},
    )


def revoke_authorization(api: GitLabAPI, user_id: int) -> None:
    """The person revokes the application in their GitLab settings: its tokens stop working."""
    oauth = api.oauth
    with api.lock:
        gone = {token for token, grant in oauth.access_tokens.items() if grant.user_id == user_id}
        for refresh, access in list(oauth.refresh_tokens.items()):
            if access in gone:
                del oauth.refresh_tokens[refresh]
        for access in gone:
            del oauth.access_tokens[access]
            api.tokens.pop(access, None)


def _error(status: int, error: str) -> Reply:
    return status, {"error": error, "error_description": DESCRIPTIONS[error]}, {}


Trade = Callable[["GitLabAPI", str, dict[str, str]], Grant | None]
GRANT_TYPES: Final[dict[str, Trade]] = {
    "authorization_code": _from_code,
    "refresh_token": _from_refresh,
}
OAUTH_ROUTES: Final[dict[str, WebHandler]] = {
    "GET /oauth/authorize": authorize,
    "POST /oauth/token": token,
    "GET /users/sign_in": sign_in_page,
}
