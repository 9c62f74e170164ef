"""Signing in to the web app with GitHub: the GitHub App's user-to-server OAuth web flow, what
the viewer's own token may do on a repository, and renewing that token before it expires.
https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
"""

from __future__ import annotations

from urllib.parse import quote

import httpx

from integrations.github.settings import GitHubSettings
from resolver.contract.inbound import secret_value
from resolver.contract.signin import (
    NO_ACCESS,
    ForgeUnreachableError,
    IssuedToken,
    OAuthClient,
    Person,
    RefreshRefusedError,
    RepoAccess,
    SignIn,
    SignInError,
    issued_token,
)
from resolver.core.settings import Settings

TIMEOUT = 10.0


def client(settings: Settings) -> OAuthClient | None:
    github = GitHubSettings.of(settings)
    secret = secret_value(github.client_secret)
    if not github.client_id or secret is None:
        return None
    web = github.web_url.rstrip("/")
    # A GitHub App's user token has the App's permissions cut to the user's; it takes no scope.
    return OAuthClient(
        client_id=github.client_id,
        client_secret=secret,
        authorize_url=f"{web}/login/oauth/authorize",
        access_token_url=f"{web}/login/oauth/access_token",
        scope="",
    )


def _get(settings: Settings, token: str, path: str) -> httpx.Response:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    }
    url = GitHubSettings.of(settings).api_url.rstrip("/") + path
    try:
        response = httpx.get(url, headers=headers, timeout=TIMEOUT)
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"GitHub did not answer: {type(error).__name__}") from None
    if response.status_code == 401:
        raise SignInError("GitHub no longer accepts your sign-in")
    if response.status_code >= 500:
        raise ForgeUnreachableError(f"GitHub answered {response.status_code}")
    return response


def person(settings: Settings, token: str) -> Person:
    """`GET /user`: the account the token acts for."""
    response = _get(settings, token, "/user")
    if response.status_code != 200:
        raise SignInError(f"GitHub answered {response.status_code} for your account")
    data = response.json()
    return Person("github", str(data["id"]), str(data["login"]))


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """`GET /repos/{owner}/{repo}`: GitHub hides a repository the token cannot read (404) and
    reports the viewer's `permissions` on one it can."""
    response = _get(settings, token, f"/repos/{quote(repo, safe='/')}")
    if response.status_code in (403, 404):
        return NO_ACCESS
    if response.status_code != 200:
        raise ForgeUnreachableError(f"GitHub answered {response.status_code} for {repo}")
    permissions = response.json().get("permissions") or {}
    push = any(bool(permissions.get(key)) for key in ("push", "maintain", "admin"))
    return RepoAccess(read=True, push=push)


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /login/oauth/access_token` with `grant_type=refresh_token`: a new user token and a
    new refresh token (the old one is then spent). GitHub answers a refusal with 200 and an
    error document; `bad_refresh_token` means it was revoked, used or expired."""
    found = client(settings)
    if found is None:
        raise ForgeUnreachableError("GitHub sign-in is not configured; no token can be renewed")
    form = {
        "client_id": found.client_id,
        "client_secret": found.client_secret,
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
    }
    try:
        response = httpx.post(
            found.access_token_url,
            data=form,
            headers={"Accept": "application/json"},
            timeout=TIMEOUT,
        )
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"GitHub did not answer: {type(error).__name__}") from None
    answer = _json(response)
    refusal = answer.get("error")
    if refusal == "bad_refresh_token":
        raise RefreshRefusedError("GitHub refused the refresh token")
    if response.status_code != 200 or refusal or "access_token" not in answer:
        raise ForgeUnreachableError(
            f"GitHub did not renew the token ({response.status_code} {refusal or 'no token'})"
        )
    return issued_token(answer)


def _json(response: httpx.Response) -> dict[str, object]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


SIGN_IN = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("github_client_id", "github_client_secret"),
)
