"""The Atlassian 3LO stand-in, driven by Authlib's OAuth2Client as the web app's account proof
drives it: a code is traded once for a token that `/me` answers for, and a reused code or a
wrong secret is refused with Atlassian's error document."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from integrations.jira.standin.atlassian_oauth import AtlassianOAuth
from tests.integrations.signin import (
    CLIENT_ID,
    PROOF_CALLBACK,
    SECRET,
    location_of,
    proof_client,
)

ACCOUNT = "5b10ac8d82e05b22cc7d4ef5"


@pytest.fixture
def atlassian() -> Iterator[AtlassianOAuth]:
    with AtlassianOAuth() as server:
        server.add_oauth_app(CLIENT_ID, SECRET)
        server.sign_in_as(ACCOUNT, name="Ada")
        yield server


def test_atlassian_3lo_gives_a_token_that_me_answers_for(
    http: httpx.Client, atlassian: AtlassianOAuth
) -> None:
    with proof_client("read:me") as client:
        url, _ = client.create_authorization_url(
            f"{atlassian.url}/authorize", audience="api.atlassian.com", prompt="consent"
        )
        back = http.get(url)
        token = client.fetch_token(
            f"{atlassian.url}/oauth/token", authorization_response=back.headers["location"]
        )
    assert (token["token_type"], token["scope"]) == ("Bearer", "read:me")
    me = http.get(
        f"{atlassian.url}/me", headers={"Authorization": f"Bearer {token['access_token']}"}
    )
    assert (me.json()["account_id"], me.json()["name"]) == (ACCOUNT, "Ada")
    assert http.get(f"{atlassian.url}/me").status_code == 401


def test_atlassian_needs_its_audience_and_consent(
    http: httpx.Client, atlassian: AtlassianOAuth
) -> None:
    query = {"client_id": CLIENT_ID, "redirect_uri": PROOF_CALLBACK, "response_type": "code"}
    assert http.get(f"{atlassian.url}/authorize", params=query).status_code == 400
    assert not atlassian.codes


def test_atlassian_refuses_a_reused_code_and_a_wrong_secret(
    http: httpx.Client, atlassian: AtlassianOAuth
) -> None:
    query = {
        "client_id": CLIENT_ID,
        "redirect_uri": PROOF_CALLBACK,
        "response_type": "code",
        "audience": "api.atlassian.com",
        "prompt": "consent",
        "scope": "read:me",
    }
    code = location_of(http.get(f"{atlassian.url}/authorize", params=query))["code"][0]
    fields = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "client_secret": "wrong",
        "code": code,
        "redirect_uri": PROOF_CALLBACK,
    }
    wrong = http.post(f"{atlassian.url}/oauth/token", json=fields)
    assert (wrong.status_code, wrong.json()["error"]) == (401, "access_denied")
    good = http.post(f"{atlassian.url}/oauth/token", json=fields | {"client_secret": SECRET})
    assert good.status_code == 200 and good.json()["access_token"]
    again = http.post(f"{atlassian.url}/oauth/token", json=fields | {"client_secret": SECRET})
    assert (again.status_code, again.json()["error"]) == (403, "invalid_grant")
