"""The Forgejo stand-in's OAuth2 provider, as a web app's sign-in meets it: authorize on the
instance, trade the code, call the API as the person; and its refusals."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from integrations.forgejo.client import ForgejoClient
from integrations.forgejo.standin.api import ForgejoAPI
from resolver.contract.errors import PermanentCallbackError

CLIENT_ID, SECRET = "0c6f3d9e-app", "gto_s3cret"
DONE = "https://resolver.example/signin/forgejo/done"


@pytest.fixture
def api(forgejo_api: ForgejoAPI) -> ForgejoAPI:
    forgejo_api.oauth.add_app(CLIENT_ID, SECRET, DONE)
    return forgejo_api


def authorize(api: ForgejoAPI, **params: str) -> httpx.Response:
    query = {"client_id": CLIENT_ID, "redirect_uri": DONE, "response_type": "code"} | params
    return httpx.get(f"{api.url}/login/oauth/authorize", params=query)


def code_from(response: httpx.Response) -> str:
    assert response.status_code == 302
    location = response.headers["location"]
    assert location.startswith(DONE)
    return parse_qs(urlsplit(location).query)["code"][0]


def trade(api: ForgejoAPI, **form: str) -> httpx.Response:
    return httpx.post(f"{api.url}/login/oauth/access_token", data=form)


def test_a_signed_in_person_is_sent_back_with_a_code_that_buys_their_token(
    api: ForgejoAPI,
) -> None:
    api.oauth.signed_in = "alice"
    response = authorize(api, state="xyz")
    assert parse_qs(urlsplit(response.headers["location"]).query)["state"] == ["xyz"]
    form = {"grant_type": "authorization_code", "code": code_from(response), "redirect_uri": DONE}
    issued = trade(api, client_id=CLIENT_ID, client_secret=SECRET, **form)
    assert issued.status_code == 200
    token = issued.json()
    assert (token["token_type"], token["expires_in"]) == ("bearer", 3600)
    assert ForgejoClient(api.url, lambda: token["access_token"]).authenticated_login() == "alice"


def test_basic_auth_also_authenticates_the_client(api: ForgejoAPI) -> None:
    api.oauth.signed_in = "alice"
    form = {"grant_type": "authorization_code", "code": code_from(authorize(api))}
    issued = httpx.post(f"{api.url}/login/oauth/access_token", data=form, auth=(CLIENT_ID, SECRET))
    assert issued.status_code == 200


def test_nobody_signed_in_is_sent_to_sign_in_first(api: ForgejoAPI) -> None:
    response = authorize(api)
    assert (response.status_code, response.headers["location"]) == (302, f"{api.url}/user/login")


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"client_id": "nobody"}, "Client ID not registered"),
        ({"redirect_uri": "https://evil.example/"}, "Unregistered Redirect URI"),
    ],
)
def test_an_unknown_client_or_redirect_is_a_page_not_a_redirect(
    api: ForgejoAPI, params: dict[str, str], why: str
) -> None:
    api.oauth.signed_in = "alice"
    response = authorize(api, **params)
    assert response.status_code == 400 and why in response.text
    assert "location" not in response.headers


def test_a_code_is_good_once_and_only_with_the_secret(api: ForgejoAPI) -> None:
    api.oauth.signed_in = "alice"
    code = code_from(authorize(api))
    form = {"grant_type": "authorization_code", "code": code, "client_id": CLIENT_ID}
    wrong = trade(api, client_secret="nope", **form)
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_client")
    assert trade(api, client_secret=SECRET, **form).status_code == 200
    again = trade(api, client_secret=SECRET, **form)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


def test_a_refresh_replaces_both_tokens_and_an_old_token_expires(api: ForgejoAPI) -> None:
    api.oauth.signed_in = "alice"
    client = {"client_id": CLIENT_ID, "client_secret": SECRET}
    first = trade(
        api, grant_type="authorization_code", code=code_from(authorize(api)), **client
    ).json()
    second = trade(api, grant_type="refresh_token", refresh_token=first["refresh_token"], **client)
    assert second.status_code == 200
    old = ForgejoClient(api.url, lambda: first["access_token"])
    with pytest.raises(PermanentCallbackError, match="401"):
        old.authenticated_login()
    fresh = second.json()["access_token"]
    api.oauth.clock = lambda: api.oauth.issued[fresh] + 3600
    with pytest.raises(PermanentCallbackError, match="401"):
        ForgejoClient(api.url, lambda: fresh).authenticated_login()
