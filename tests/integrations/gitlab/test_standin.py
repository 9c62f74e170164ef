"""The GitLab stand-in's OAuth web flow, driven over HTTP by Authlib's OAuth2Client as a web
app's sign-in would drive it (and once by Chromium, as a person's browser would), and what its
project endpoints then show the person's token: hidden private projects and their
permissions."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from authlib.integrations.httpx_client import OAuth2Client, OAuthError
from playwright.sync_api import Browser

from integrations.gitlab.standin.api import DEVELOPER, GitLabAPI
from tests.integrations.signin import (
    ALICE_ID,
    CALLBACK,
    CLIENT_ID,
    SECRET,
    browser_sign_in,
    location_of,
    sign_in,
)

REPORTER = 20


@pytest.fixture
def gitlab() -> Iterator[GitLabAPI]:
    """GitLab with an OAuth application, alice signed in, and group/secret (private) where
    alice is a Reporter and bob a Developer, and group/open (public)."""
    with GitLabAPI() as api:
        api.add_oauth_app(CLIENT_ID, SECRET)
        api.sign_in_as("alice", user_id=ALICE_ID)
        secret = api.add_project("group/secret", "unused")
        api.add_member(secret, ALICE_ID, REPORTER)
        api.add_member(secret, api.add_user("bob"), DEVELOPER)
        api.add_project("group/open", "unused", visibility="public")
        yield api


def gitlab_client(tls: ssl.SSLContext) -> OAuth2Client:
    scope = "read_user read_api"
    return OAuth2Client(CLIENT_ID, SECRET, redirect_uri=CALLBACK, scope=scope, verify=tls)


def gitlab_urls(api: GitLabAPI) -> tuple[str, str]:
    return f"{api.url}/oauth/authorize", f"{api.url}/oauth/token"


def gitlab_sign_in(http: httpx.Client, api: GitLabAPI, client: OAuth2Client) -> tuple[str, Any]:
    return sign_in(http, client, *gitlab_urls(api))


def gitlab_get(http: httpx.Client, api: GitLabAPI, path: str, token: str) -> httpx.Response:
    return http.get(f"{api.url}/api/v4{path}", headers={"Authorization": f"Bearer {token}"})


def test_gitlab_sign_in_gives_tokens_for_the_person_signed_in(
    http: httpx.Client, tls: ssl.SSLContext, gitlab: GitLabAPI
) -> None:
    with gitlab_client(tls) as client:
        location, token = gitlab_sign_in(http, gitlab, client)
    assert location.startswith(CALLBACK + "&code=")
    assert (token["token_type"], token["expires_in"]) == ("Bearer", 7200)
    assert token["scope"] == "read_user read_api" and token["refresh_token"]
    user = gitlab_get(http, gitlab, "/user", token["access_token"]).json()
    assert (user["id"], user["username"], user["state"]) == (ALICE_ID, "alice", "active")
    assert user["web_url"] == f"{gitlab.url}/alice"
    [asked] = gitlab.oauth.authorizations
    assert (asked.client_id, asked.redirect_uri, asked.signed_in) == (CLIENT_ID, CALLBACK, "alice")


def test_gitlab_refresh_revokes_the_old_tokens(
    http: httpx.Client, tls: ssl.SSLContext, gitlab: GitLabAPI
) -> None:
    with gitlab_client(tls) as client:
        _, first = gitlab_sign_in(http, gitlab, client)
        second = client.refresh_token(gitlab_urls(gitlab)[1])
        assert second["access_token"] != first["access_token"]
        with pytest.raises(OAuthError) as refused:
            client.refresh_token(gitlab_urls(gitlab)[1], first["refresh_token"])
    assert refused.value.error == "invalid_grant"
    assert gitlab_get(http, gitlab, "/user", first["access_token"]).status_code == 401
    assert gitlab_get(http, gitlab, "/user", second["access_token"]).json()["username"] == "alice"


def test_gitlab_access_token_expires_after_two_hours(
    http: httpx.Client, tls: ssl.SSLContext, gitlab: GitLabAPI
) -> None:
    with gitlab_client(tls) as client:
        _, token = gitlab_sign_in(http, gitlab, client)
    gitlab.oauth.clock = lambda: token["created_at"] + 7201
    expired = gitlab_get(http, gitlab, "/user", token["access_token"])
    assert (expired.status_code, expired.json()["error"]) == (401, "invalid_token")


def gitlab_code(http: httpx.Client, api: GitLabAPI) -> str:
    query = {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "response_type": "code"}
    return location_of(http.get(gitlab_urls(api)[0], params=query))["code"][0]


def gitlab_exchange(http: httpx.Client, api: GitLabAPI, **change: str) -> httpx.Response:
    fields = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "redirect_uri": CALLBACK,
    }
    return http.post(gitlab_urls(api)[1], data=fields | change)


def test_gitlab_refuses_a_code_twice(http: httpx.Client, gitlab: GitLabAPI) -> None:
    code = gitlab_code(http, gitlab)
    assert gitlab_exchange(http, gitlab, code=code).status_code == 200
    again = gitlab_exchange(http, gitlab, code=code)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


def test_gitlab_refuses_a_code_after_ten_minutes(http: httpx.Client, gitlab: GitLabAPI) -> None:
    code = gitlab_code(http, gitlab)
    issued = gitlab.oauth.codes[code].issued_at
    gitlab.oauth.clock = lambda: issued + 601
    assert gitlab_exchange(http, gitlab, code=code).json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("change", "status", "error"),
    [
        ({"client_secret": "wrong"}, 401, "invalid_client"),
        ({"redirect_uri": "http://127.0.0.1:8000/elsewhere"}, 400, "invalid_grant"),
        ({"grant_type": "password"}, 400, "unsupported_grant_type"),
    ],
)
def test_gitlab_exchange_errors(
    http: httpx.Client, gitlab: GitLabAPI, change: dict[str, str], status: int, error: str
) -> None:
    answer = gitlab_exchange(http, gitlab, code=gitlab_code(http, gitlab), **change)
    assert (answer.status_code, answer.json()["error"]) == (status, error)
    assert answer.json()["error_description"]


def test_gitlab_authorize_pages(http: httpx.Client, gitlab: GitLabAPI) -> None:
    authorize = gitlab_urls(gitlab)[0]
    query = {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "state": "xyz"}
    unknown = http.get(authorize, params=query | {"client_id": "unknown"})
    assert unknown.status_code == 401 and "text/html" in unknown.headers["content-type"]
    implicit = location_of(http.get(authorize, params=query | {"response_type": "token"}))
    assert (implicit["error"], implicit["state"]) == (["unsupported_response_type"], ["xyz"])
    gitlab.oauth.signed_in = None
    nobody = http.get(authorize, params=query | {"response_type": "code"}, follow_redirects=True)
    assert nobody.url.path == "/users/sign_in" and nobody.status_code == 200
    assert not gitlab.oauth.codes


def gitlab_token_for(http: httpx.Client, tls: ssl.SSLContext, api: GitLabAPI, username: str) -> str:
    api.sign_in_as(username)
    with gitlab_client(tls) as client:
        _, token = gitlab_sign_in(http, api, client)
    return str(token["access_token"])


def test_gitlab_hides_a_private_project_from_a_non_member(
    http: httpx.Client, tls: ssl.SSLContext, gitlab: GitLabAPI
) -> None:
    token = gitlab_token_for(http, tls, gitlab, "carol")
    for path in ("/projects/group%2Fsecret", "/projects/group%2Fsecret/merge_requests"):
        answer = gitlab_get(http, gitlab, path, token)
        assert (answer.status_code, answer.json()) == (404, {"message": "404 Project Not Found"})


@pytest.mark.parametrize(
    ("username", "project", "access_level"),
    [
        ("alice", "group/secret", REPORTER),
        ("bob", "group/secret", DEVELOPER),
        ("carol", "group/open", None),
    ],
)
def test_gitlab_project_as_a_person_sees_it(
    http: httpx.Client,
    tls: ssl.SSLContext,
    gitlab: GitLabAPI,
    username: str,
    project: str,
    access_level: int | None,
) -> None:
    token = gitlab_token_for(http, tls, gitlab, username)
    answer = gitlab_get(http, gitlab, f"/projects/{project.replace('/', '%2F')}", token)
    assert answer.status_code == 200
    access = answer.json()["permissions"]["project_access"]
    assert (access or {}).get("access_level") == access_level
    assert answer.json()["permissions"]["group_access"] is None


def test_a_browser_signs_in_with_gitlab(
    browser: Browser, tls: ssl.SSLContext, gitlab: GitLabAPI
) -> None:
    token = browser_sign_in(browser, gitlab_client(tls), *gitlab_urls(gitlab))
    assert gitlab.tokens[token["access_token"]] == ALICE_ID
