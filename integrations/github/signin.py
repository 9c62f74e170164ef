"""Signing in to the web app with GitHub: the GitHub App's user-to-server OAuth web flow, what
the viewer's own token may do on a repository, and renewing that token before it expires.
https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from integrations.github.settings import GitHubSettings
from integrations.toolkit import oauth
from integrations.toolkit.answers import fields, number, text
from resolver.contract.signin import (
    NO_ACCESS,
    IssuedToken,
    OAuthClient,
    Person,
    RepoAccess,
    SignIn,
)
from resolver.core.settings import Settings

VENDOR = "GitHub"
HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
GRANT = oauth.RefreshGrant(VENDOR, refusals=frozenset({"bad_refresh_token"}), refusal_statuses=None)


def client(settings: Settings) -> OAuthClient | None:
    github = GitHubSettings.of(settings)
    # A GitHub App's user token has the App's permissions cut to the user's; it takes no scope.
    return oauth.configured_client(
        github.client_id,
        github.client_secret,
        github.web_url,
        authorize="/login/oauth/authorize",
        token="/login/oauth/access_token",
        scope="",
    )


def _get(settings: Settings, token: str, path: str) -> httpx.Response:
    url = GitHubSettings.of(settings).api_url.rstrip("/") + path
    return oauth.viewer_get(VENDOR, url, f"Bearer {token}", headers=HEADERS)


def person(settings: Settings, token: str) -> Person:
    """`GET /user`: the account the token acts for."""
    data = oauth.account_answer(VENDOR, _get(settings, token, "/user"))
    return oauth.read_answer(VENDOR, lambda: data, _person)


def _person(data: dict[str, Any]) -> Person:
    """The account's numeric id, never its login, is the identity."""
    return Person("github", str(number(data["id"])), text(data["login"]))


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """`GET /repos/{owner}/{repo}`: GitHub hides a repository the token cannot read (404) and
    reports the viewer's `permissions` on one it can."""
    data = oauth.repo_answer(VENDOR, _get(settings, token, f"/repos/{quote(repo, safe='/')}"), repo)
    if data is None:
        return NO_ACCESS
    return oauth.read_answer(VENDOR, lambda: data, _access)


def _access(data: dict[str, Any]) -> RepoAccess:
    """The viewer's `permissions` on a repository they can read (an object of flags)."""
    permissions = fields(data.get("permissions") or {})
    push = any(bool(permissions.get(key)) for key in ("push", "maintain", "admin"))
    return RepoAccess(read=True, push=push)


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /login/oauth/access_token` with `grant_type=refresh_token`: a new user token and a
    new refresh token (the old one is then spent). GitHub answers a refusal with 200 and an
    error document; `bad_refresh_token` means it was revoked, used or expired."""
    return oauth.refresh_grant(GRANT, client(settings), refresh_token)


SIGN_IN = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("github_client_id", "github_client_secret"),
)
