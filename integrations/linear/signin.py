"""Proving a Linear account: Linear's OAuth 2.0 authorization code flow, then the GraphQL
`viewer`, whose `id` is the user id Linear's webhooks name actors by.
https://linear.app/developers/oauth-2-0-authentication
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from integrations.linear.settings import LinearSettings
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

VIEWER = "query { viewer { id name } }"


def client(settings: Settings) -> OAuthClient | None:
    config = LinearSettings.of(settings)
    secret = secret_value(config.client_secret)
    if not config.client_id or secret is None:
        return None
    api = urlsplit(config.api_url)
    return OAuthClient(
        client_id=config.client_id,
        client_secret=secret,
        authorize_url=config.web_url.rstrip("/") + "/oauth/authorize",
        # The token endpoint sits beside the GraphQL endpoint, on the API's origin.
        access_token_url=f"{api.scheme}://{api.netloc}/oauth/token",
        scope="read",
        secret_in_body=True,
    )


def whoami(settings: Settings, token: str) -> Person:
    """`{ viewer { id name } }`: the Linear user the token acts for."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        with bounded_client(SIGN_IN) as http:
            response = http.post(
                LinearSettings.of(settings).api_url, json={"query": VIEWER}, headers=headers
            )
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"Linear did not answer: {type(error).__name__}") from None
    if response.status_code >= 500 or response.status_code == 429:
        raise ForgeUnreachableError(f"Linear answered {response.status_code}")
    if response.status_code != 200:
        raise SignInError(f"Linear answered {response.status_code} for your account")
    return read_answer("Linear", response.json, _person)


def _person(answer: object) -> Person:
    """The `viewer` the answer names: its `id`, never a name, is the identity."""
    viewer = fields(fields(fields(answer)["data"])["viewer"])
    user = text(viewer["id"])
    return Person("linear", user, str(viewer.get("name") or user))


PROOF = IdentityProof(
    client=client, whoami=whoami, client_settings=("linear_client_id", "linear_client_secret")
)
