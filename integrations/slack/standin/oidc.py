"""Sign in with Slack (OpenID Connect) on the Slack stand-in: the person signed in approves an
app, which trades the code for a user token (`xoxp-…`) and an ID token signed with the key
published at `/openid/connect/keys`; `openid.connect.userInfo` then says whom it belongs to.

    api.add_oauth_app("1234.5678", "a-secret")
    api.sign_in_as("U0ALICE", name="alice")               # who the browser is on Slack
    GET  /openid/connect/authorize?response_type=code&client_id=…&scope=openid%20profile&…
    POST /api/openid.connect.token      client_id, client_secret (or HTTP Basic), code, redirect_uri
    POST /api/openid.connect.userInfo   Authorization: Bearer xoxp-…

Like Slack's other methods, a refused exchange is HTTP 200 with `{"ok": false, "error": …}`.
https://api.slack.com/authentication/sign-in-with-slack
https://api.slack.com/methods/openid.connect.token
https://api.slack.com/methods/openid.connect.userInfo
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Final

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from integrations.slack.standin.state import Identity, error, ok
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
    from integrations.slack.standin.api import SlackAPI

KEY_ID: Final = "slack-standin-1"
USER_CLAIM: Final = "https://slack.com/user_id"
TEAM_CLAIM: Final = "https://slack.com/team_id"


@dataclass
class SlackOIDC(CodeFlow[Identity]):
    """The code flow, and the people tokens it issued (`xoxp-…` -> who)."""

    people: dict[str, Identity] = field(default_factory=dict)

    @cached_property
    def key(self) -> RSAKey:
        return RSAKey.generate_key(2048, parameters={"kid": KEY_ID, "use": "sig", "alg": "RS256"})


def _issuer(api: SlackAPI) -> str:
    return api.origin


def discovery(api: SlackAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /.well-known/openid-configuration`: where the flow's endpoints are."""
    origin = api.origin
    return (
        200,
        {
            "issuer": _issuer(api),
            "authorization_endpoint": f"{origin}/openid/connect/authorize",
            "token_endpoint": f"{origin}/api/openid.connect.token",
            "userinfo_endpoint": f"{origin}/api/openid.connect.userInfo",
            "jwks_uri": f"{origin}/openid/connect/keys",
            "scopes_supported": ["openid", "profile", "email"],
            "response_types_supported": ["code"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        },
        {},
    )


def keys(api: SlackAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /openid/connect/keys`: the public keys ID tokens are signed with."""
    return 200, KeySet([api.oidc.key]).as_dict(private=False), {}


def authorize(api: SlackAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`GET /openid/connect/authorize`: back to the redirect_uri with a code and the state."""
    oidc = api.oidc
    client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
    if client_id not in oidc.apps:
        return html_page(400, "Slack", "Invalid client_id parameter")
    if not redirect_uri:
        return html_page(400, "Slack", "No redirect_uri, and the app has none configured.")
    scopes = set(params.get("scope", "").split())
    if params.get("response_type") != "code" or "openid" not in scopes:
        return html_page(400, "Slack", "Sign in with Slack needs response_type=code, scope openid")
    code = oidc.approve(params)
    if code is None:
        return html_page(200, "Sign in to Slack", "Nobody is signed in: sign in to continue.")
    state = {"state": params["state"]} if "state" in params else {}
    return redirect(with_query(redirect_uri, {"code": code} | state))


def token(api: SlackAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`openid.connect.token`: a code traded once for a user token and an ID token."""
    oidc = api.oidc
    client_id, secret = basic_credentials(headers) or (
        params.get("client_id", ""),
        params.get("client_secret", ""),
    )
    if client_id not in oidc.apps:
        return (*error("invalid_client_id"), {})
    if not oidc.client_ok(client_id, secret):
        return (*error("bad_client_secret"), {})
    grant_type = params.get("grant_type", "authorization_code")
    if grant_type != "authorization_code":
        return (*error("invalid_grant_type"), {})
    grant = oidc.redeem(params.get("code", ""), client_id, params.get("redirect_uri"))
    if grant is None:
        return (*error("invalid_code"), {})
    access = "xoxp-" + secrets.token_hex(20)
    oidc.people[access] = grant.who
    claims = _claims(api, grant.who, client_id, grant.issued_at)
    if grant.nonce:
        claims["nonce"] = grant.nonce
    id_token = jwt.encode({"alg": "RS256", "kid": KEY_ID}, claims, oidc.key)
    return (*ok(access_token=access, token_type="Bearer", id_token=id_token), {})


def _claims(api: SlackAPI, who: Identity, client_id: str, at: float) -> dict[str, object]:
    now = int(api.oidc.clock())
    return {
        "iss": _issuer(api),
        "sub": who.user_id,
        "aud": client_id,
        "exp": now + 3600,
        "iat": now,
        "auth_time": int(at),
        USER_CLAIM: who.user_id,
        TEAM_CLAIM: who.team_id,
        "name": who.name,
    }


def user_info(api: SlackAPI, params: dict[str, str], headers: dict[str, str]) -> Reply:
    """`openid.connect.userInfo`: who the Bearer token signed in as."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme != "Bearer" or not value:
        return (*error("not_authed"), {})
    who = api.oidc.people.get(value)
    if who is None:
        return (*error("invalid_auth"), {})
    fields = {USER_CLAIM: who.user_id, TEAM_CLAIM: who.team_id}
    return (*ok(sub=who.user_id, name=who.name, **fields), {})


OIDC_ROUTES: Final[dict[str, WebHandler]] = {
    "GET /.well-known/openid-configuration": discovery,
    "GET /openid/connect/keys": keys,
    "GET /openid/connect/authorize": authorize,
    "POST /api/openid.connect.token": token,
    "POST /api/openid.connect.userInfo": user_info,
    "GET /api/openid.connect.userInfo": user_info,
}
