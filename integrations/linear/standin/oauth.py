"""Linear's OAuth 2.0 authorization code flow on the Linear stand-in: the person signed in to
Linear approves an app, which trades the code for an access token that the GraphQL API then
accepts (`Authorization: Bearer`) as that person.

    api.add_oauth_app("client-id", "a-secret")
    api.sign_in_as(actor)                        # an Actor from api.add_user(…)
    GET  /oauth/authorize?client_id=…&redirect_uri=…&response_type=code&scope=read&state=…
    POST /oauth/token    code, redirect_uri, client_id, client_secret, grant_type (form-encoded)

In production the consent page is on linear.app and the token endpoint on api.linear.app; the
stand-in serves both on its one origin. A code is good once, for ten minutes.
https://linear.app/developers/oauth-2-0-authentication
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Final

from integrations.linear.standin.workspace import Actor
from integrations.standin.oauth_codes import CodeFlow
from integrations.standin.server import Reply, WebHandler, html_page, redirect, with_query

if TYPE_CHECKING:
    from integrations.linear.standin.api import LinearAPI

TOKEN_LIFETIME: Final = 315_705_599  # what Linear answers: about ten years
SCOPES: Final = frozenset({"read", "write", "issues:create", "comments:create", "admin"})
DESCRIPTIONS: Final = {
    "invalid_client": "Client authentication failed",
    "invalid_grant": "The authorization code is invalid, expired or was issued to another client",
    "unsupported_grant_type": "The grant type is not supported",
}


class LinearOAuth(CodeFlow[Actor]):
    """The code flow's apps, who is signed in, and its codes."""


def authorize(api: LinearAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /oauth/authorize`: back to the redirect_uri with a code and the state."""
    oauth = api.oauth
    client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
    if client_id not in oauth.apps or not redirect_uri:
        return html_page(400, "Linear", "Invalid client_id or redirect_uri")
    scopes = set(params.get("scope", "").replace(",", " ").split())
    if params.get("response_type") != "code" or not scopes or not scopes <= SCOPES:
        return html_page(400, "Linear", "Invalid response_type or scope")
    code = oauth.approve(params)
    if code is None:
        return html_page(200, "Log in to Linear", "Nobody is signed in: log in to continue.")
    state = {"state": params["state"]} if "state" in params else {}
    return redirect(with_query(redirect_uri, {"code": code} | state))


def token(api: LinearAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`POST /oauth/token`: the client's id and secret in the form, then a code traded once."""
    oauth, client_id = api.oauth, params.get("client_id", "")
    if not oauth.client_ok(client_id, params.get("client_secret", "")):
        return _error(401, "invalid_client")
    if params.get("grant_type") != "authorization_code":
        return _error(400, "unsupported_grant_type")
    grant = oauth.redeem(params.get("code", ""), client_id, params.get("redirect_uri"))
    if grant is None:
        return _error(400, "invalid_grant")
    access = secrets.token_hex(32)
    api.add_oauth_token(access, grant.who)
    scope = sorted(set(grant.scope.replace(",", " ").split()))
    answer = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": TOKEN_LIFETIME,
        "scope": scope,
    }
    return 200, answer, {}


def _error(status: int, error: str) -> Reply:
    return status, {"error": error, "error_description": DESCRIPTIONS[error]}, {}


OAUTH_ROUTES: Final[dict[str, WebHandler]] = {
    "GET /oauth/authorize": authorize,
    "POST /oauth/token": token,
}
