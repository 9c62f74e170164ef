"""Proving a Slack account: Sign in with Slack (OpenID Connect). Authlib checks the ID token
against Slack's keys; `whoami` asks `openid.connect.userInfo` whom the token belongs to, named
as Slack senders are (`TEAM:USER`).
https://api.slack.com/authentication/sign-in-with-slack
"""

from __future__ import annotations

from typing import Any

import httpx

from integrations.slack.settings import SlackSettings
from integrations.toolkit.answers import fields, text
from integrations.toolkit.http import bounded_client
from integrations.toolkit.oauth import SIGN_IN, read_answer
from resolver.contract.inbound import secret_value
from resolver.contract.signin import (
    ForgeUnreachableError,
    IdentityProof,
    OAuthClient,
    Person,
    SignInError,
)
from resolver.core.settings import Settings

USER_CLAIM = "https://slack.com/user_id"
TEAM_CLAIM = "https://slack.com/team_id"


def client(settings: Settings) -> OAuthClient | None:
    config = SlackSettings.of(settings)
    secret = secret_value(config.client_secret)
    if not config.client_id or secret is None:
        return None
    web = config.web_url.rstrip("/")
    return OAuthClient(
        client_id=config.client_id,
        client_secret=secret,
        authorize_url=f"{web}/openid/connect/authorize",
        access_token_url=config.api_url.rstrip("/") + "/openid.connect.token",
        scope="openid profile",
        # Slack reads the client's credentials from the form, as its other methods' arguments.
        secret_in_body=True,
        issuer=web,
        jwks_url=f"{web}/openid/connect/keys",
    )


def whoami(settings: Settings, token: str) -> Person:
    """`openid.connect.userInfo`: the person and workspace the token was issued for. Slack
    answers HTTP 200 with `ok: false` when it refuses the token."""
    url = SlackSettings.of(settings).api_url.rstrip("/") + "/openid.connect.userInfo"
    try:
        with bounded_client(SIGN_IN) as http:
            response = http.post(url, headers={"Authorization": f"Bearer {token}"})
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"Slack did not answer: {type(error).__name__}") from None
    if response.status_code >= 500 or response.status_code == 429:
        raise ForgeUnreachableError(f"Slack answered {response.status_code}")
    data = read_answer("Slack", response.json, fields) if response.status_code == 200 else {}
    if not data.get("ok"):
        raise SignInError(f"Slack did not say who you are ({data.get('error') or 'no user'})")
    return read_answer("Slack", lambda: data, _person)


def _person(data: dict[str, Any]) -> Person:
    """The user and team the claims name: together, never a name, they are the identity."""
    user, team = text(data[USER_CLAIM]), text(data[TEAM_CLAIM])
    return Person("slack", f"{team}:{user}", str(data.get("name") or user))


PROOF = IdentityProof(
    client=client, whoami=whoami, client_settings=("slack_client_id", "slack_client_secret")
)
