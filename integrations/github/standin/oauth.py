"""GitHub's OAuth web flow on the stand-in's origin (github.com, never below the API prefix):
the person signed in approves an app, and the app trades the code for a user token (`gho_…`)
that the REST API then accepts as that person.

    api.add_oauth_app("Iv1.8a61f9b3a7aba766", "a-secret")
    api.sign_in_as("alice")                           # who the browser is on GitHub
    GET  {web_url}/login/oauth/authorize?client_id=…&redirect_uri=…&state=…   302 → ?code&state
    POST {web_url}/login/oauth/access_token           {"access_token": "gho_…", …}

Whoever is signed in approves every app at once (as after a first consent). A code is good
once, for ten minutes, for the app it was issued to. GitHub answers a failed exchange with 200
and an error document, in the format the Accept header asks for.

With `oauth.expiring` (a GitHub App whose user tokens expire, its default), a code is traded
for a `ghu_` token good for eight hours and a `ghr_` refresh token good for six months; the
refresh token is traded once (`grant_type=refresh_token`) for a new pair, after which neither
it nor the old access token works. `revoke_authorization(login)` is the person revoking the
app in their settings: every token it holds for them stops working.
https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
https://docs.github.com/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors
https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
"""

from __future__ import annotations

import re
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final
from urllib.parse import urlencode

from integrations.standin.server import (
    Reply,
    Text,
    WebHandler,
    basic_credentials,
    html_page,
    redirect,
    with_query,
)

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

CODE_LIFETIME: Final = 600.0  # seconds
TOKEN_LIFETIME: Final = 28_800  # a GitHub App's expiring user token: eight hours
REFRESH_LIFETIME: Final = 15_897_600  # its refresh token: six months
TROUBLESHOOTING: Final = "https://docs.github.com/apps/managing-oauth-apps"
# error -> its description and the troubleshooting page GitHub links to.
EXCHANGE_ERRORS: Final = {
    "incorrect_client_credentials": (
        "The client_id and/or client_secret passed are incorrect.",
        "troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials",
    ),
    "redirect_uri_mismatch": (
        "The redirect_uri MUST match the registered callback URL for this application.",
        "troubleshooting-authorization-request-errors/#redirect-uri-mismatch2",
    ),
    "bad_verification_code": (
        "The code passed is incorrect or expired.",
        "troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code",
    ),
    "bad_refresh_token": (
        "The refresh token passed is incorrect or expired.",
        "troubleshooting-oauth-app-access-token-request-errors/#bad-refresh-token",
    ),
    "unsupported_grant_type": (
        "The grant type is not supported.",
        "troubleshooting-oauth-app-access-token-request-errors",
    ),
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
    """What a code stands for: a token acting as `login`, for the app it was issued to."""

    client_id: str
    redirect_uri: str
    scope: str
    login: str
    issued_at: float


@dataclass(frozen=True)
class Issued:
    """An expiring user token or a refresh token: for whom, which app, and until when."""

    client_id: str
    login: str
    scope: str
    expires_at: float


@dataclass
class OAuthWeb:
    """The OAuth apps (client id -> secret), who is signed in, the authorize requests in order,
    the codes not yet traded, and the live expiring tokens (`expiring`) and refresh tokens;
    `clock` ages codes and tokens (a test may move it on)."""

    apps: dict[str, str] = field(default_factory=dict)
    signed_in: str | None = None
    authorizations: list[Authorization] = field(default_factory=list)
    codes: dict[str, Grant] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    expiring: bool = False
    access_tokens: dict[str, Issued] = field(default_factory=dict)
    refresh_tokens: dict[str, tuple[Issued, str]] = field(default_factory=dict)  # -> its access
    refreshes: list[str] = field(default_factory=list)  # outcome of each refresh, in order

    def expired(self, token: str) -> bool:
        """Whether `token` is an expiring user token past its eight hours."""
        issued = self.access_tokens.get(token)
        return issued is not None and self.clock() >= issued.expires_at

    def redeem(self, code: str, client_id: str) -> Grant | None:
        """The live grant of `code` for this client; None if unknown, used, expired or another's."""
        grant = self.codes.get(code)
        if grant is None or grant.client_id != client_id:
            return None
        return grant if self.clock() - grant.issued_at <= CODE_LIFETIME else None


def authorize(api: GitHubAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /login/oauth/authorize`: back to the app's redirect_uri with a code and the state."""
    oauth = api.oauth
    client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
    scope = params.get("scope", "")
    record = Authorization(client_id, redirect_uri, scope, params.get("state", ""), oauth.signed_in)
    oauth.authorizations.append(record)
    if client_id not in oauth.apps:
        return html_page(404, "Page not found · GitHub", "No OAuth app has this client_id.")
    if oauth.signed_in is None:
        return html_page(200, "Sign in to GitHub", "Nobody is signed in: sign in to continue.")
    if not redirect_uri:
        # GitHub would use the app's registered callback URL; the stand-in's apps have none.
        return html_page(400, "Redirect URI missing", "Send a redirect_uri with the request.")
    code = secrets.token_hex(10)
    oauth.codes[code] = Grant(client_id, redirect_uri, scope, oauth.signed_in, oauth.clock())
    state = {"state": params["state"]} if "state" in params else {}
    return redirect(with_query(redirect_uri, {"code": code} | state))


def access_token(api: GitHubAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`POST /login/oauth/access_token`: a code (or, for expiring tokens, a refresh token)
    traded once for a user token. The client authenticates with HTTP Basic or with client_id
    and client_secret in the body."""
    oauth = api.oauth
    sent = (params.get("client_id", ""), params.get("client_secret", ""))
    client_id, secret = basic_credentials(headers) or sent
    if not secret or oauth.apps.get(client_id) != secret:
        return _exchange_error(headers, "incorrect_client_credentials")
    grant_type = params.get("grant_type", "authorization_code")
    if grant_type == "refresh_token":
        return _refresh(api, client_id, params, headers)
    if grant_type != "authorization_code":
        return _exchange_error(headers, "unsupported_grant_type")
    code = params.get("code", "")
    grant = oauth.redeem(code, client_id)
    if grant is None:
        return _exchange_error(headers, "bad_verification_code")
    if params.get("redirect_uri", grant.redirect_uri) != grant.redirect_uri:
        return _exchange_error(headers, "redirect_uri_mismatch")
    del oauth.codes[code]
    # Asked for with spaces or commas; granted scopes are listed with commas.
    scope = ",".join(s for s in re.split(r"[\s,]+", grant.scope) if s)
    if oauth.expiring:
        return _issue_expiring(api, client_id, grant.login, scope, headers)
    token = _token("gho_")
    api.add_token(token, grant.login)
    return _exchange_answer(
        headers, {"access_token": token, "token_type": "bearer", "scope": scope}
    )


def _token(prefix: str) -> str:
    return prefix + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))


def _refresh(
    api: GitHubAPI, client_id: str, params: dict[str, str], headers: dict[str, str]
) -> Reply:
    """A refresh token traded once: it and the access token issued with it stop working."""
    oauth = api.oauth  # (the stand-in answers one request at a time: under its lock)
    found = oauth.refresh_tokens.pop(params.get("refresh_token", ""), None)
    live = found is not None and found[0].client_id == client_id
    if found is None or not live or oauth.clock() >= found[0].expires_at:
        oauth.refreshes.append("refused")
        return _exchange_error(headers, "bad_refresh_token")
    issued, access = found
    oauth.access_tokens.pop(access, None)
    api.tokens.pop(access, None)
    oauth.refreshes.append("renewed")
    return _issue_expiring(api, client_id, issued.login, issued.scope, headers)


def _issue_expiring(
    api: GitHubAPI, client_id: str, login: str, scope: str, headers: dict[str, str]
) -> Reply:
    oauth, now = api.oauth, api.oauth.clock()
    access, refresh = _token("ghu_"), _token("ghr_")
    oauth.access_tokens[access] = Issued(client_id, login, scope, now + TOKEN_LIFETIME)
    oauth.refresh_tokens[refresh] = (
        Issued(client_id, login, scope, now + REFRESH_LIFETIME),
        access,
    )
    api.add_token(access, login)
    fields: dict[str, str | int] = {
        "access_token": access,
        "expires_in": TOKEN_LIFETIME,
        "refresh_token": refresh,
        "refresh_token_expires_in": REFRESH_LIFETIME,
        "token_type": "bearer",
        "scope": scope,
    }
    return _exchange_answer(headers, fields)


def revoke_authorization(api: GitHubAPI, login: str) -> None:
    """The person revokes the app in their settings: its tokens for them stop working."""
    oauth = api.oauth
    with api.lock:
        for refresh, (issued, _) in list(oauth.refresh_tokens.items()):
            if issued.login == login:
                del oauth.refresh_tokens[refresh]
        for access, issued in list(oauth.access_tokens.items()):
            if issued.login == login:
                del oauth.access_tokens[access]
                api.tokens.pop(access, None)


def _exchange_error(headers: dict[str, str], error: str) -> Reply:
    description, page = EXCHANGE_ERRORS[error]
    fields: dict[str, str | int] = {"error": error, "error_description": description}
    return _exchange_answer(headers, fields | {"error_uri": f"{TROUBLESHOOTING}/{page}"})


def _exchange_answer(headers: dict[str, str], fields: dict[str, str | int]) -> Reply:
    """JSON when the Accept header asks for it, else form-encoded; always 200, errors too."""
    if "application/json" in headers.get("accept", ""):
        return 200, fields, {}
    form = Text(urlencode(fields), "application/x-www-form-urlencoded; charset=utf-8")
    return 200, form, {}


OAUTH_ROUTES: Final[dict[str, WebHandler]] = {
    "GET /login/oauth/authorize": authorize,
    "POST /login/oauth/access_token": access_token,
}
