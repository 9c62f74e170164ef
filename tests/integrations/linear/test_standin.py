"""The Linear OAuth stand-in, driven by Authlib's OAuth2Client as the web app's account proof
drives it: a code is traded once for a token the GraphQL viewer answers for, and a wrong
secret is refused with Linear's error document."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from authlib.integrations.httpx_client import OAuthError

from integrations.linear.standin.api import Actor, LinearAPI
from tests.integrations.signin import (
    CLIENT_ID,
    PROOF_CALLBACK,
    SECRET,
    location_of,
    proof_client,
    sign_in,
)


@pytest.fixture
def linear_api() -> Iterator[LinearAPI]:
    with LinearAPI() as api:
        api.add_oauth_app(CLIENT_ID, SECRET)
        api.sign_in_as(Actor("aacdca22-6266-4c0a-ab3c-8fa70a26765c", "Ada Lovelace", "ada"))
        yield api


def test_linear_oauth_gives_a_token_the_graphql_viewer_answers_for(
    http: httpx.Client, linear_api: LinearAPI
) -> None:
    with proof_client("read") as client:
        location, token = sign_in(
            http, client, f"{linear_api.origin}/oauth/authorize", f"{linear_api.origin}/oauth/token"
        )
        with pytest.raises(OAuthError) as reused:
            client.fetch_token(f"{linear_api.origin}/oauth/token", authorization_response=location)
    assert reused.value.error == "invalid_grant"
    assert (token["token_type"], token["scope"]) == ("Bearer", ["read"])
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    viewer = http.post(linear_api.url, json={"query": "{ viewer { id name } }"}, headers=headers)
    assert viewer.json()["data"]["viewer"]["id"] == "aacdca22-6266-4c0a-ab3c-8fa70a26765c"


def test_linear_refuses_a_wrong_secret(http: httpx.Client, linear_api: LinearAPI) -> None:
    query = {"client_id": CLIENT_ID, "redirect_uri": PROOF_CALLBACK, "response_type": "code"}
    code = location_of(
        http.get(f"{linear_api.origin}/oauth/authorize", params=query | {"scope": "read"})
    )["code"][0]
    fields = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "client_secret": "wrong",
        "code": code,
        "redirect_uri": PROOF_CALLBACK,
    }
    answer = http.post(f"{linear_api.origin}/oauth/token", data=fields)
    assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client")
