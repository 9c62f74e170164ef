"""The identity-proof stand-ins (Sign in with Slack, Atlassian 3LO, Linear OAuth), driven by
Authlib's OAuth2Client as the web app's proof drives them: a code is traded once for a token
that names the person signed in, and a reused code or a wrong secret is refused with the
provider's own error document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from authlib.integrations.httpx_client import OAuth2Client, OAuthError
from joserfc import jwt
from joserfc.jwk import KeySet

from integrations.jira.standin.atlassian_oauth import AtlassianOAuth
from integrations.linear.standin.api import Actor, LinearAPI
from integrations.slack.standin.api import TEAM_ID, SlackAPI
from tests.integrations.github.test_standin import location_of, sign_in

CLIENT_ID, SECRET = "proof-client", "proof-secret-" + "9f" * 8
CALLBACK = "http://127.0.0.1:8000/prove/done"
ACCOUNT = "5b10ac8d82e05b22cc7d4ef5"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False) as client:
        yield client


def client_for(scope: str, **extra: Any) -> OAuth2Client:
    return OAuth2Client(
        CLIENT_ID,
        SECRET,
        redirect_uri=CALLBACK,
        scope=scope,
        token_endpoint_auth_method="client_secret_post",
        trust_env=False,
        **extra,
    )


# --- Slack -----------------------------------------------------------------------------------


@pytest.fixture
def slack_api() -> Iterator[SlackAPI]:
    with SlackAPI() as api:
        api.add_oauth_app(CLIENT_ID, SECRET)
        api.sign_in_as("U0ALICE", name="alice")
        yield api


def slack_urls(api: SlackAPI) -> tuple[str, str]:
    return f"{api.origin}/openid/connect/authorize", f"{api.base_url}openid.connect.token"


def test_sign_in_with_slack_gives_a_signed_id_token_and_user_info(
    http: httpx.Client, slack_api: SlackAPI
) -> None:
    with client_for("openid profile") as client:
        url, _ = client.create_authorization_url(slack_urls(slack_api)[0], nonce="n-0S6")
        back = http.get(url)
        token = client.fetch_token(
            slack_urls(slack_api)[1], authorization_response=back.headers["location"]
        )
    assert token["access_token"].startswith("xoxp-") and token["token_type"] == "Bearer"
    keys = KeySet.import_key_set(http.get(f"{slack_api.origin}/openid/connect/keys").json())
    claims = jwt.decode(token["id_token"], keys).claims
    assert (claims["iss"], claims["aud"], claims["nonce"]) == (slack_api.origin, CLIENT_ID, "n-0S6")
    assert claims["https://slack.com/user_id"] == "U0ALICE"
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    info = http.post(f"{slack_api.base_url}openid.connect.userInfo", headers=headers).json()
    assert info["ok"] and info["https://slack.com/user_id"] == "U0ALICE"
    assert info["https://slack.com/team_id"] == TEAM_ID
    stranger = http.post(
        f"{slack_api.base_url}openid.connect.userInfo", headers={"Authorization": "Bearer x"}
    )
    assert stranger.json() == {"ok": False, "error": "invalid_auth"}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"client_secret": "wrong"}, "bad_client_secret"),
        ({"client_id": "unknown"}, "invalid_client_id"),
        ({"code": "reused"}, "invalid_code"),
    ],
)
def test_slack_refuses_an_exchange_with_ok_false(
    http: httpx.Client, slack_api: SlackAPI, change: dict[str, str], error: str
) -> None:
    query = {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "scope": "openid"}
    code = location_of(http.get(slack_urls(slack_api)[0], params=query | {"response_type": "code"}))
    fields = {"client_id": CLIENT_ID, "client_secret": SECRET, "redirect_uri": CALLBACK}
    fields["code"] = code["code"][0]
    if change.get("code") == "reused":
        assert http.post(slack_urls(slack_api)[1], data=fields).json()["ok"] is True
        change = {}
    answer = http.post(slack_urls(slack_api)[1], data=fields | change)
    assert answer.status_code == 200 and answer.json() == {"ok": False, "error": error}


# --- Atlassian -------------------------------------------------------------------------------


@pytest.fixture
def atlassian() -> Iterator[AtlassianOAuth]:
    with AtlassianOAuth() as server:
        server.add_oauth_app(CLIENT_ID, SECRET)
        server.sign_in_as(ACCOUNT, name="Ada")
        yield server


def test_atlassian_3lo_gives_a_token_that_me_answers_for(
    http: httpx.Client, atlassian: AtlassianOAuth
) -> None:
    with client_for("read:me") as client:
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
    query = {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "response_type": "code"}
    assert http.get(f"{atlassian.url}/authorize", params=query).status_code == 400
    assert not atlassian.codes


def test_atlassian_refuses_a_reused_code_and_a_wrong_secret(
    http: httpx.Client, atlassian: AtlassianOAuth
) -> None:
    query = {
        "client_id": CLIENT_ID,
        "redirect_uri": CALLBACK,
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
        "redirect_uri": CALLBACK,
    }
    wrong = http.post(f"{atlassian.url}/oauth/token", json=fields)
    assert (wrong.status_code, wrong.json()["error"]) == (401, "access_denied")
    good = http.post(f"{atlassian.url}/oauth/token", json=fields | {"client_secret": SECRET})
    assert good.status_code == 200 and good.json()["access_token"]
    again = http.post(f"{atlassian.url}/oauth/token", json=fields | {"client_secret": SECRET})
    assert (again.status_code, again.json()["error"]) == (403, "invalid_grant")


# --- Linear ----------------------------------------------------------------------------------


@pytest.fixture
def linear_api() -> Iterator[LinearAPI]:
    with LinearAPI() as api:
        api.add_oauth_app(CLIENT_ID, SECRET)
        api.sign_in_as(Actor("aacdca22-6266-4c0a-ab3c-8fa70a26765c", "Ada Lovelace", "ada"))
        yield api


def test_linear_oauth_gives_a_token_the_graphql_viewer_answers_for(
    http: httpx.Client, linear_api: LinearAPI
) -> None:
    with client_for("read") as client:
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
    query = {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "response_type": "code"}
    code = location_of(
        http.get(f"{linear_api.origin}/oauth/authorize", params=query | {"scope": "read"})
    )["code"][0]
    fields = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "client_secret": "wrong",
        "code": code,
        "redirect_uri": CALLBACK,
    }
    answer = http.post(f"{linear_api.origin}/oauth/token", data=fields)
    assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client")
