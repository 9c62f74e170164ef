"""Signing in to the web app with Bitbucket: an OAuth 2.0 consumer of the workspace, the account
a token acts for (`GET /2.0/user`), what it may do on a repository (its own effective
permission, `GET /2.0/user/permissions/repositories`), and renewing it (Bitbucket's access
tokens last two hours). https://developer.atlassian.com/cloud/bitbucket/oauth-2/
"""

from __future__ import annotations

from typing import Any, Final

import httpx

from integrations.bitbucket.client import WRITE_PERMISSIONS, split_repo
from integrations.bitbucket.settings import BitbucketSettings
from integrations.toolkit import oauth
from integrations.toolkit.answers import items, text
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.signin import (
    NO_ACCESS,
    IssuedToken,
    OAuthClient,
    Person,
    RepoAccess,
    SignIn,
)
from resolver.core.settings import Settings

NAME: Final = "bitbucket"
# A consumer's permissions are set on the consumer itself; these are what sign-in needs.
SCOPE: Final = "account repository"
VENDOR: Final = "Bitbucket"
GRANT: Final = oauth.RefreshGrant(VENDOR, basic_auth=True)


def client(settings: Settings) -> OAuthClient | None:
    config = BitbucketSettings.of(settings)
    return oauth.configured_client(
        config.client_id,
        config.client_secret,
        config.web_url,
        authorize="/site/oauth2/authorize",
        token="/site/oauth2/access_token",
        scope=SCOPE,
    )


def _get(
    settings: Settings, token: str, path: str, params: dict[str, str] | None = None
) -> httpx.Response:
    api = BitbucketSettings.of(settings).api_url.rstrip("/")
    return oauth.viewer_get(VENDOR, api + path, f"Bearer {token}", params=params)


def person(settings: Settings, token: str) -> Person:
    """`GET /user`: the account the token acts for, by its uuid."""
    data = oauth.account_answer(VENDOR, _get(settings, token, "/user"))
    return oauth.read_answer(VENDOR, lambda: data, _person)


def _person(data: dict[str, Any]) -> Person:
    """The account's uuid, never a name, is the identity."""
    uuid = text(data["uuid"])
    return Person(NAME, uuid, text(data.get("nickname") or data.get("display_name") or uuid))


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """The viewer's own effective permission on the repository: none listed, no access."""
    try:
        split_repo(repo)
    except PermanentCallbackError:
        return NO_ACCESS
    query = {"q": f'repository.full_name="{repo}"'}
    data = oauth.repo_answer(
        VENDOR, _get(settings, token, "/user/permissions/repositories", query), repo
    )
    if data is None:
        return NO_ACCESS
    permission = oauth.read_answer(VENDOR, lambda: data, _permission)
    return RepoAccess(read=permission != "none", push=permission in WRITE_PERMISSIONS)


def _permission(data: dict[str, Any]) -> str:
    """The first permission listed (an array of objects), or none."""
    values = items(data.get("values") or [])
    return text(values[0].get("permission") or "none") if values else "none"


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /site/oauth2/access_token` with `grant_type=refresh_token` (the consumer by HTTP
    Basic): new tokens. A revoked or unknown refresh token is a 400 `invalid_grant`."""
    return oauth.refresh_grant(GRANT, client(settings), refresh_token)


SIGN_IN: Final = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("bitbucket_client_id", "bitbucket_client_secret"),
)
