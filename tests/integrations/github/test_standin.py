"""The GitHub and GitLab stand-ins' OAuth web flows, driven over HTTP by Authlib's OAuth2Client
as a web app's sign-in would drive them (and once by Chromium, as a person's browser would),
and what the forges' repository endpoints then show the person's token: hidden private
repositories and their permissions."""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from authlib.integrations.httpx_client import OAuth2Client, OAuthError
from playwright.sync_api import Browser, sync_playwright

from integrations.github.standin.api import GitHubAPI
from integrations.gitlab.standin.api import DEVELOPER, GitLabAPI
from integrations.standin.server import Loopback, LoopbackHandler

CLIENT_ID, SECRET = "Iv1.8a61f9b3a7aba766", "app-secret-" + "5e" * 10
# A web app's callback; its own query survives the forge's redirect.
CALLBACK = "http://127.0.0.1:8000/auth/callback?next=%2Fjobs"
ALICE_ID = 583231
REPORTER = 20


def sign_in(
    http: httpx.Client, client: OAuth2Client, authorize_url: str, token_url: str
) -> tuple[str, Any]:
    """Send the browser to the forge, follow its redirect back, trade the code: the location
    the forge redirected to and the token."""
    url, _ = client.create_authorization_url(authorize_url)
    back = http.get(url)
    assert back.status_code == 302, back.text
    location = back.headers["location"]
    return location, client.fetch_token(token_url, authorization_response=location)


def location_of(authorize: httpx.Response) -> dict[str, list[str]]:
    assert authorize.status_code == 302, authorize.text
    return parse_qs(urlsplit(authorize.headers["location"]).query)


@pytest.fixture(scope="session")
def tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle anew takes a fifth of a second."""
    return ssl.create_default_context()


@pytest.fixture(scope="session")
def http(tls: ssl.SSLContext) -> Iterator[httpx.Client]:
    """The browser, and the web app's requests other than Authlib's."""
    with httpx.Client(verify=tls) as client:
        yield client


# --- GitHub ----------------------------------------------------------------------------------


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


# --- GitLab ----------------------------------------------------------------------------------


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


# --- In a browser ----------------------------------------------------------------------------

# What scripts/browser prints: Debian's Chromium, which Playwright drives.
CHROMIUM = Path(os.environ.get("RESOLVER_TEST_CHROMIUM") or "/usr/lib/chromium/chromium")


class CallbackPage(LoopbackHandler):
    """The web app's callback page, on an origin of its own."""

    def answer(self) -> None:
        page = b"<!DOCTYPE html><html><head><title>Signed in</title></head></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (scripts/browser installs it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()


def browser_sign_in(
    browser: Browser, client: OAuth2Client, authorize_url: str, token_url: str
) -> Any:
    """A person's browser goes to the forge, which sends it on to the app's callback page with
    a code; the app trades the code for a token."""
    with Loopback(CallbackPage) as app, client, browser.new_page() as page:
        client.redirect_uri = f"{app.origin}/auth/callback?next=%2Fjobs"
        url, state = client.create_authorization_url(authorize_url)
        page.goto(url)
        assert page.title() == "Signed in"
        query = parse_qs(urlsplit(page.url).query)
        assert (query["next"], query["state"]) == (["/jobs"], [state])
        return client.fetch_token(token_url, authorization_response=page.url)


def test_a_browser_signs_in_with_github(
    browser: Browser, tls: ssl.SSLContext, github: GitHubAPI
) -> None:
    token = browser_sign_in(browser, github_client(tls), *github_urls(github))
    assert github.tokens[token["access_token"]] == "alice"


def test_a_browser_signs_in_with_gitlab(
    browser: Browser, tls: ssl.SSLContext, gitlab: GitLabAPI
) -> None:
    token = browser_sign_in(browser, gitlab_client(tls), *gitlab_urls(gitlab))
    assert gitlab.tokens[token["access_token"]] == ALICE_ID
