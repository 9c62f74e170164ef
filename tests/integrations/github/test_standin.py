"""The GitHub stand-in's OAuth web flow, driven over HTTP by Authlib's OAuth2Client as a web
app's sign-in would drive it (and once by Chromium, as a person's browser would), and what its
repository endpoints then show the person's token: hidden private repositories and their
permissions."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from authlib.integrations.httpx_client import OAuth2Client, OAuthError
from playwright.sync_api import Browser

from integrations.github.standin.api import GitHubAPI
from tests.integrations.signin import (
    ALICE_ID,
    CALLBACK,
    CLIENT_ID,
    SECRET,
    browser_sign_in,
    location_of,
    sign_in,
)


@pytest.fixture
def github() -> Iterator[GitHubAPI]:
    """GitHub with an OAuth app, alice signed in, and octo/widgets (public) and octo/secret
    (private) where alice reads and bob writes."""
    with GitHubAPI(app_id="1", public_key="unused", prefix="/api/v3") as api:
        api.add_oauth_app(CLIENT_ID, SECRET)
        api.sign_in_as("alice", user_id=ALICE_ID)
        collaborators = {"alice": "read", "bob": "write"}
        api.add_repo("octo/widgets", "unused", collaborators={"bob": "admin"})
        api.add_repo("octo/secret", "unused", private=True, collaborators=collaborators)
        yield api


def github_client(tls: ssl.SSLContext) -> OAuth2Client:
    return OAuth2Client(CLIENT_ID, SECRET, redirect_uri=CALLBACK, scope="read:user", verify=tls)


def github_urls(api: GitHubAPI) -> tuple[str, str]:
    """The authorize and token endpoints: on the origin, outside the API's prefix."""
    return f"{api.web_url}/login/oauth/authorize", f"{api.web_url}/login/oauth/access_token"


def github_sign_in(http: httpx.Client, api: GitHubAPI, client: OAuth2Client) -> tuple[str, Any]:
    return sign_in(http, client, *github_urls(api))


def github_code(http: httpx.Client, api: GitHubAPI) -> str:
    query = {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "state": "xyz"}
    return location_of(http.get(github_urls(api)[0], params=query))["code"][0]


def test_github_sign_in_gives_a_token_for_the_person_signed_in(
    http: httpx.Client, tls: ssl.SSLContext, github: GitHubAPI
) -> None:
    with github_client(tls) as client:
        location, token = github_sign_in(http, github, client)
    assert location.startswith(CALLBACK + "&code=")
    assert token["access_token"].startswith("gho_") and len(token["access_token"]) == 40
    assert (token["token_type"], token["scope"]) == ("bearer", "read:user")
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    user = http.get(f"{github.base_url}/user", headers=headers).json()
    assert (user["login"], user["id"], user["type"]) == ("alice", ALICE_ID, "User")
    [asked] = github.oauth.authorizations
    state = parse_qs(urlsplit(location).query)["state"][0]
    assert (asked.client_id, asked.redirect_uri, asked.scope) == (CLIENT_ID, CALLBACK, "read:user")
    assert (asked.state, asked.signed_in) == (state, "alice")


def test_github_user_id_is_the_same_for_every_token_of_a_login(
    http: httpx.Client, tls: ssl.SSLContext, github: GitHubAPI
) -> None:
    github.sign_in_as("bob")
    ids = []
    for _ in range(2):
        with github_client(tls) as client:
            _, token = github_sign_in(http, github, client)
        headers = {"Authorization": f"token {token['access_token']}"}
        ids.append(http.get(f"{github.base_url}/user", headers=headers).json()["id"])
    assert ids[0] == ids[1] != ALICE_ID


@pytest.mark.parametrize("body", ["form", "json"])
def test_github_answers_form_encoded_unless_json_is_accepted(
    http: httpx.Client, github: GitHubAPI, body: str
) -> None:
    fields = {"client_id": CLIENT_ID, "client_secret": SECRET, "code": github_code(http, github)}
    url = github_urls(github)[1]
    answer = http.post(url, data=fields) if body == "form" else http.post(url, json=fields)
    assert answer.headers["content-type"].startswith("application/x-www-form-urlencoded")
    token = parse_qs(answer.text)
    assert token["token_type"] == ["bearer"] and token["access_token"][0] in github.tokens


def test_github_refuses_a_code_twice(
    http: httpx.Client, tls: ssl.SSLContext, github: GitHubAPI
) -> None:
    with github_client(tls) as client:
        location, _ = github_sign_in(http, github, client)
        with pytest.raises(OAuthError) as refused:
            client.fetch_token(github_urls(github)[1], authorization_response=location)
    assert refused.value.error == "bad_verification_code"


def test_github_refuses_a_code_after_ten_minutes(http: httpx.Client, github: GitHubAPI) -> None:
    code = github_code(http, github)
    issued = github.oauth.codes[code].issued_at
    github.oauth.clock = lambda: issued + 601
    assert github_exchange(http, github, code=code)["error"] == "bad_verification_code"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"client_secret": "wrong"}, "incorrect_client_credentials"),
        ({"client_id": "Iv1.unknown"}, "incorrect_client_credentials"),
        ({"code": "0" * 20}, "bad_verification_code"),
        ({"redirect_uri": "http://127.0.0.1:8000/elsewhere"}, "redirect_uri_mismatch"),
    ],
)
def test_github_exchange_errors(
    http: httpx.Client, github: GitHubAPI, change: dict[str, str], error: str
) -> None:
    code = github_code(http, github)
    answer = github_exchange(http, github, **({"code": code} | change))
    assert answer["error"] == error
    assert answer["error_uri"].startswith("https://docs.github.com/")
    # A refused exchange leaves the code good.
    assert github_exchange(http, github, code=code)["token_type"] == "bearer"


def github_exchange(http: httpx.Client, api: GitHubAPI, **change: str) -> dict[str, str]:
    """A JSON exchange of a code, with fields changed; GitHub answers errors with 200 too."""
    fields = {"client_id": CLIENT_ID, "client_secret": SECRET, "redirect_uri": CALLBACK} | change
    headers = {"Accept": "application/json"}
    answer = http.post(github_urls(api)[1], data=fields, headers=headers)
    assert answer.status_code == 200
    result: dict[str, str] = answer.json()
    return result


def test_github_authorize_pages(http: httpx.Client, github: GitHubAPI) -> None:
    authorize = github_urls(github)[0]
    unknown = http.get(authorize, params={"client_id": "Iv1.unknown", "redirect_uri": CALLBACK})
    assert unknown.status_code == 404 and "text/html" in unknown.headers["content-type"]
    github.oauth.signed_in = None
    nobody = http.get(authorize, params={"client_id": CLIENT_ID, "redirect_uri": CALLBACK})
    assert nobody.status_code == 200 and "Nobody is signed in" in nobody.text
    assert not github.oauth.codes


def github_token_for(http: httpx.Client, tls: ssl.SSLContext, api: GitHubAPI, login: str) -> str:
    api.sign_in_as(login)
    with github_client(tls) as client:
        _, token = github_sign_in(http, api, client)
    return str(token["access_token"])


def test_github_hides_a_private_repo_from_a_person_not_collaborating(
    http: httpx.Client, tls: ssl.SSLContext, github: GitHubAPI
) -> None:
    headers = {"Authorization": f"Bearer {github_token_for(http, tls, github, 'carol')}"}
    for path in ("/repos/octo/secret", "/repos/octo/secret/pulls"):
        answer = http.get(f"{github.base_url}{path}", headers=headers)
        assert (answer.status_code, answer.json()["message"]) == (404, "Not Found")


@pytest.mark.parametrize(
    ("login", "repo", "permissions"),
    [
        ("alice", "octo/secret", {"pull"}),
        ("bob", "octo/secret", {"pull", "triage", "push"}),
        ("carol", "octo/widgets", {"pull"}),
        ("bob", "octo/widgets", {"pull", "triage", "push", "maintain", "admin"}),
    ],
)
def test_github_repo_as_a_person_sees_it(
    http: httpx.Client,
    tls: ssl.SSLContext,
    github: GitHubAPI,
    login: str,
    repo: str,
    permissions: set[str],
) -> None:
    headers = {"Authorization": f"Bearer {github_token_for(http, tls, github, login)}"}
    answer = http.get(f"{github.base_url}/repos/{repo}", headers=headers)
    assert answer.status_code == 200
    shown = answer.json()["permissions"]
    assert set(shown) == {"admin", "maintain", "push", "triage", "pull"}
    assert {name for name, granted in shown.items() if granted} == permissions


def test_github_installation_token_sees_private_repos_without_permissions(
    http: httpx.Client,
    github: GitHubAPI,
) -> None:
    headers = {"Authorization": f"token {github.mint()}"}
    answer = http.get(f"{github.base_url}/repos/octo/secret", headers=headers)
    assert answer.status_code == 200 and "permissions" not in answer.json()


def test_a_browser_signs_in_with_github(
    browser: Browser, tls: ssl.SSLContext, github: GitHubAPI
) -> None:
    token = browser_sign_in(browser, github_client(tls), *github_urls(github))
    assert github.tokens[token["access_token"]] == "alice"
