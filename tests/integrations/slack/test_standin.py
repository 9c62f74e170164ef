"""The Sign in with Slack stand-in, driven by Authlib's OAuth2Client as the web app's account
proof drives it: a code is traded once for a signed id token that names the person, and a bad
exchange is answered with Slack's `ok: false`."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from integrations.slack.standin.api import TEAM_ID, SlackAPI
from tests.integrations.signin import (
    CLIENT_ID,
    PROOF_CALLBACK,
    SECRET,
    location_of,
    proof_client,
)


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
    with proof_client("openid profile") as client:
        url, _ = client.create_authorization_url(slack_urls(slack_api)[0], nonce="n-0S6")
        back = http.get(url)
        token = client.fetch_token(
            slack_urls(slack_api)[1], authorization_response=back.headers["location"]
        )
    assert token["access_token"].startswith("xoxp-") and token["token_type"] == "Bearer"
    keys = KeySet.import_key_set(http.get(f"{slack_api.origin}/openid/connect/keys").json())
    claims = jwt.decode(token["id_token"], keys).claims
    assert (claims["iss"], claims["aud"], claims["nonce"]) == (
        slack_api.origin,
        CLIENT_ID,
        "n-0S6",
    )
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
    query = {"client_id": CLIENT_ID, "redirect_uri": PROOF_CALLBACK, "scope": "openid"}
    code = location_of(http.get(slack_urls(slack_api)[0], params=query | {"response_type": "code"}))
    fields = {
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "redirect_uri": PROOF_CALLBACK,
    }
    fields["code"] = code["code"][0]
    if change.get("code") == "reused":
        assert http.post(slack_urls(slack_api)[1], data=fields).json()["ok"] is True
        change = {}
    answer = http.post(slack_urls(slack_api)[1], data=fields | change)
    assert answer.status_code == 200 and answer.json() == {"ok": False, "error": error}
