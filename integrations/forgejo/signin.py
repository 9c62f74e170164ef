"""Signing in to the web app with Forgejo (or Gitea): an OAuth2 application on the instance,
the account a token acts for (`GET /api/v1/user`), what it may do on a repository, and renewing
it (Forgejo's access tokens last an hour; a refresh rotates the refresh token).
https://forgejo.org/docs/latest/user/oauth2-provider/
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

import httpx

from integrations.forgejo.client import API_PREFIX, WRITE_MODES, split_repo
from integrations.forgejo.settings import ForgejoSettings
from integrations.toolkit import oauth
from integrations.toolkit.answers import number, text
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.signin import (
    NO_ACCESS,
    ForgeUnreachableError,
    IssuedToken,
    OAuthClient,
    Person,
    RepoAccess,
    SignIn,
)
from resolver.core.settings import Settings

NAME: Final = "forgejo"
# Forgejo's scoped-token scopes; an OAuth2 grant without one acts with all the user's rights.
SCOPE: Final = "read:user read:repository"
VENDOR: Final = "Forgejo"
GRANT: Final = oauth.RefreshGrant(VENDOR)


def _base(settings: Settings) -> str | None:
    url = ForgejoSettings.of(settings).url
    return url.rstrip("/") if url else None


def client(settings: Settings) -> OAuthClient | None:
    config = ForgejoSettings.of(settings)
    return oauth.configured_client(
        config.client_id,
        config.client_secret,
        _base(settings),
        authorize="/login/oauth/authorize",
        token="/login/oauth/access_token",
        scope=SCOPE,
        secret_in_body=True,
    )


def _get(settings: Settings, token: str, path: str) -> httpx.Response:
    base = _base(settings)
    if base is None:
        raise ForgeUnreachableError("no Forgejo instance is configured (RESOLVER_FORGEJO_URL)")
    return oauth.viewer_get(VENDOR, base + API_PREFIX + path, f"token {token}")


def person(settings: Settings, token: str) -> Person:
    """`GET /api/v1/user`: the account the token acts for."""
    data = oauth.account_answer(VENDOR, _get(settings, token, "/user"))
    return oauth.read_answer(VENDOR, lambda: data, _person)


def _person(data: dict[str, Any]) -> Person:
    """The account's numeric id, never its login, is the identity."""
    return Person(NAME, str(number(data["id"])), text(data["login"]))


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """The viewer's own mode on the repository, through the collaborator permission API (a
    person may always ask for their own): Forgejo answers 404 for a repository the token cannot
    read."""
    try:
        owner, name = split_repo(repo)
    except PermanentCallbackError:
        return NO_ACCESS
    login = person(settings, token).login
    path = f"/repos/{owner}/{name}/collaborators/{quote(login, safe='')}/permission"
    data = oauth.repo_answer(VENDOR, _get(settings, token, path), repo)
    if data is None:
        return NO_ACCESS
    mode = oauth.read_answer(VENDOR, lambda: data, _mode)
    return RepoAccess(read=mode != "none", push=mode in WRITE_MODES)


def _mode(data: dict[str, Any]) -> str:
    """The viewer's mode on the repository (a name: none, read, write, admin, owner)."""
    return text(data.get("permission") or "none")


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /login/oauth/access_token` with `grant_type=refresh_token`: new tokens. A used,
    revoked or unknown refresh token is a 400 `invalid_grant` (RFC 6749 section 5.2)."""
    return oauth.refresh_grant(GRANT, client(settings), refresh_token)


SIGN_IN: Final = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("forgejo_client_id", "forgejo_client_secret"),
)
