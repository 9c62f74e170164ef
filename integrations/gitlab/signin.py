"""Signing in to the web app with GitLab: an OAuth application's web flow, what the viewer's
own token may do on a project, and renewing that token (every refresh rotates the refresh token).
https://docs.gitlab.com/api/oauth2/ https://docs.gitlab.com/api/projects/#get-a-single-project
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from integrations.gitlab.settings import GitLabSettings
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
DEVELOPER = 30  # the lowest access level that may push


def client(settings: Settings) -> OAuthClient | None:
    config = GitLabSettings.of(settings)
    secret = secret_value(config.client_secret)
    if not config.client_id or secret is None:
        return None
    base = config.url.rstrip("/")
    return OAuthClient(
        client_id=config.client_id,
        client_secret=secret,
        authorize_url=f"{base}/oauth/authorize",
        access_token_url=f"{base}/oauth/token",
        scope="read_api",
    )


def _get(settings: Settings, token: str, path: str) -> httpx.Response:
    url = GitLabSettings.of(settings).url.rstrip("/") + "/api/v4" + path
    try:
        response = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"GitLab did not answer: {type(error).__name__}") from None
    if response.status_code == 401:
        raise SignInError("GitLab no longer accepts your sign-in")
    if response.status_code >= 500:
        raise ForgeUnreachableError(f"GitLab answered {response.status_code}")
    return response


def person(settings: Settings, token: str) -> Person:
    """`GET /user`: the account the token acts for."""
    response = _get(settings, token, "/user")
    if response.status_code != 200:
        raise SignInError(f"GitLab answered {response.status_code} for your account")
    data = response.json()
    return Person("gitlab", str(data["id"]), str(data["username"]))


def _level(permissions: dict[str, Any], key: str) -> int:
    found = permissions.get(key)
    return int(found.get("access_level") or 0) if isinstance(found, dict) else 0


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """GitLab answers 404 for a project the token cannot read, and reports the viewer's own
    and inherited access levels on one it can."""
    response = _get(settings, token, f"/projects/{quote(repo, safe='')}")
    if response.status_code in (403, 404):
        return NO_ACCESS
    if response.status_code != 200:
        raise ForgeUnreachableError(f"GitLab answered {response.status_code} for {repo}")
    permissions = response.json().get("permissions") or {}
    level = max(_level(permissions, "project_access"), _level(permissions, "group_access"))
    return RepoAccess(read=True, push=level >= DEVELOPER)


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /oauth/token` with `grant_type=refresh_token`: new tokens, the old ones revoked.
    A revoked, used or unknown refresh token is a 400 `invalid_grant` (RFC 6749 section 5.2)."""
    found = client(settings)
    if found is None:
        raise ForgeUnreachableError("GitLab sign-in is not configured; no token can be renewed")
    form = {
        "client_id": found.client_id,
        "client_secret": found.client_secret,
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "redirect_uri": f"{settings.public_url.rstrip('/')}/signin/gitlab/done",
    }
    try:
        response = httpx.post(found.access_token_url, data=form, timeout=TIMEOUT)
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"GitLab did not answer: {type(error).__name__}") from None
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    if response.status_code == 400 and answer.get("error") == "invalid_grant":
        raise RefreshRefusedError("GitLab refused the refresh token")
    if response.status_code != 200 or "access_token" not in answer:
        problem = answer.get("error") or "no token"
        raise ForgeUnreachableError(
            f"GitLab did not renew the token ({response.status_code} {problem})"
        )
    return issued_token(answer)


SIGN_IN = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("gitlab_client_id", "gitlab_client_secret"),
)
