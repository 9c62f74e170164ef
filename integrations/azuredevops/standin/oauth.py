"""The stand-in's Microsoft Entra ID: the authorize and token endpoints of one tenant (v2.0),
as an app registration sees them.

    GET  /<TENANT>/oauth2/v2.0/authorize?client_id=…&redirect_uri=…&response_type=code&scope=…
    POST /<TENANT>/oauth2/v2.0/token    grant_type=authorization_code | refresh_token

A redirect URI must be one registered with the app; every token error is a 400 with RFC 6749's
`error`. An access token is a JWT-shaped string (three dot-separated parts), which the
organisation's API takes as Bearer; it lasts an hour, and a refresh replaces both tokens.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from integrations.standin.oauth_codes import CodeFlow
from integrations.standin.server import Reply, WebHandler, html_page, redirect, with_query

if TYPE_CHECKING:
    from integrations.azuredevops.standin.api import AzureDevOpsAPI

TENANT: Final = "contoso.onmicrosoft.com"
TOKEN_LIFETIME: Final = 3600


@dataclass
class EntraApps(CodeFlow[str]):
    """Apps (client id -> secret) and their redirect URIs; who is signed in (an identity id);
    live refresh tokens (refresh -> access)."""

    redirect_uris: dict[str, tuple[str, ...]] = field(default_factory=dict)
    refresh_tokens: dict[str, str] = field(default_factory=dict)

    def add_app(self, client_id: str, secret: str, *redirect_uris: str) -> None:
        self.apps[client_id] = secret
        self.redirect_uris[client_id] = redirect_uris


def authorize(api: AzureDevOpsAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    entra = api.entra
    client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
    if client_id not in entra.apps or redirect_uri not in entra.redirect_uris[client_id]:
        return html_page(400, "Sign in", "AADSTS50011: the redirect URI does not match")
    state = {"state": params.get("state", "")}
    code = entra.approve(params)
    if code is None:
        return redirect(with_query(redirect_uri, {"error": "login_required"} | state))
    return redirect(with_query(redirect_uri, {"code": code} | state))


def token(api: AzureDevOpsAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    entra = api.entra
    if not entra.client_ok(params.get("client_id", ""), params.get("client_secret", "")):
        return _error("invalid_client", "AADSTS7000215: invalid client secret")
    grant_type = params.get("grant_type", "")
    if grant_type == "authorization_code":
        grant = entra.redeem(
            params.get("code", ""), params["client_id"], params.get("redirect_uri")
        )
        who = grant.who if grant is not None else None
    elif grant_type == "refresh_token":
        access = entra.refresh_tokens.pop(params.get("refresh_token", ""), None)
        who = api.tokens.pop(access) if access is not None else None
    else:
        return _error("unsupported_grant_type", "AADSTS70003")
    if who is None:
        return _error("invalid_grant", "AADSTS70008: the code or refresh token is not valid")
    return _issue(api, who)


def _issue(api: AzureDevOpsAPI, who: str) -> Reply:
    parts = (base64.urlsafe_b64encode(secrets.token_bytes(18)).decode() for _ in range(3))
    access, refresh = ".".join(parts), secrets.token_urlsafe(32)
    api.tokens[access] = who
    api.entra.refresh_tokens[refresh] = access
    answer = {
        "token_type": "Bearer",
        "scope": "499b84ac-1321-427f-aa17-267ca6975798/user_impersonation",
        "expires_in": TOKEN_LIFETIME,
        "access_token": access,
        "refresh_token": refresh,
    }
    return 200, answer, {}


def _error(error: str, description: str) -> Reply:
    return 400, {"error": error, "error_description": description}, {}


ENTRA_ROUTES: Final[dict[str, WebHandler]] = {
    f"GET /{TENANT}/oauth2/v2.0/authorize": authorize,
    f"POST /{TENANT}/oauth2/v2.0/token": token,
}
