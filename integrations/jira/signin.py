"""Proving a Jira (Atlassian) account: Atlassian's OAuth 2.0 authorization code grant (3LO),
then `GET /me`, whose `account_id` is the `accountId` Jira Cloud's webhooks name senders by.
https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/
"""

from __future__ import annotations

import httpx

from integrations.jira.settings import JiraSettings
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


def client(settings: Settings) -> OAuthClient | None:
    config = JiraSettings.of(settings)
    secret = secret_value(config.atlassian_client_secret)
    if not config.atlassian_client_id or secret is None:
        return None
    auth = config.atlassian_auth_url.rstrip("/")
    return OAuthClient(
        client_id=config.atlassian_client_id,
        client_secret=secret,
        authorize_url=f"{auth}/authorize",
        access_token_url=f"{auth}/oauth/token",
        # `read:me` is the User Identity API's scope; `prompt=consent` is required.
        scope="read:me",
        authorize_params={"audience": "api.atlassian.com", "prompt": "consent"},
        secret_in_body=True,
    )


def whoami(settings: Settings, token: str) -> Person:
    """`GET /me`: the Atlassian account the token acts for."""
    url = JiraSettings.of(settings).atlassian_api_url.rstrip("/") + "/me"
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    try:
        with bounded_client(SIGN_IN) as http:
            response = http.get(url, headers=headers)
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"Atlassian did not answer: {type(error).__name__}") from None
    if response.status_code >= 500 or response.status_code == 429:
        raise ForgeUnreachableError(f"Atlassian answered {response.status_code}")
    if response.status_code != 200:
        raise SignInError(f"Atlassian answered {response.status_code} for your account")
    return read_answer("Atlassian", response.json, _person)


def _person(answer: object) -> Person:
    """The account `GET /me` names: its `account_id`, never a name, is the identity."""
    data = fields(answer)
    account = text(data["account_id"])
    return Person("jira", account, str(data.get("nickname") or data.get("name") or account))


PROOF = IdentityProof(
    client=client, whoami=whoami, client_settings=("atlassian_client_id", "atlassian_client_secret")
)
