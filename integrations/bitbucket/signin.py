"""Signing in to the web app with Bitbucket: an OAuth 2.0 consumer of the workspace, the account
a token acts for (`GET /2.0/user`), what it may do on a repository (its own effective
permission, `GET /2.0/user/permissions/repositories`), and renewing it (Bitbucket's access
tokens last two hours). https://developer.atlassian.com/cloud/bitbucket/oauth-2/
"""

from __future__ import annotations

from typing import Final

import httpx

from integrations.bitbucket.client import WRITE_PERMISSIONS, split_repo
from integrations.bitbucket.settings import BitbucketSettings
from resolver.contract.errors import PermanentCallbackError
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

TIMEOUT: Final = 10.0
NAME: Final = "bitbucket"
# A consumer's permissions are set on the consumer itself; these are what sign-in needs.
SCOPE: Final = "account repository"
REFUSED: Final = frozenset({"invalid_grant", "unauthorized_client"})


def client(settings: Settings) -> OAuthClient | None:
    config = BitbucketSettings.of(settings)
    secret = secret_value(config.client_secret)
    if not config.client_id or secret is None:
        return None
    web = config.web_url.rstrip("/")
    return OAuthClient(
        client_id=config.client_id,
        client_secret=secret,
        authorize_url=f"{web}/site/oauth2/authorize",
        access_token_url=f"{web}/site/oauth2/access_token",
        scope=SCOPE,
    )


def _get(
    settings: Settings, token: str, path: str, params: dict[str, str] | None = None
) -> httpx.Response:
    api = BitbucketSettings.of(settings).api_url.rstrip("/")
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    try:
        response = httpx.get(api + path, headers=headers, params=params, timeout=TIMEOUT)
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"Bitbucket did not answer: {type(error).__name__}") from None
    if response.status_code == 401:
        raise SignInError("Bitbucket no longer accepts your sign-in")
    if response.status_code >= 500:
        raise ForgeUnreachableError(f"Bitbucket answered {response.status_code}")
    return response


def person(settings: Settings, token: str) -> Person:
    """`GET /user`: the account the token acts for, by its uuid."""
    response = _get(settings, token, "/user")
    if response.status_code != 200:
        raise SignInError(f"Bitbucket answered {response.status_code} for your account")
    data = response.json()
    login = data.get("nickname") or data.get("display_name") or data["uuid"]
    return Person(NAME, str(data["uuid"]), str(login))


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """The viewer's own effective permission on the repository: none listed, no access."""
    try:
        split_repo(repo)
    except PermanentCallbackError:
        return NO_ACCESS
    query = {"q": f'repository.full_name="{repo}"'}
    response = _get(settings, token, "/user/permissions/repositories", query)
    if response.status_code in (403, 404):
        return NO_ACCESS
    if response.status_code != 200:
        raise ForgeUnreachableError(f"Bitbucket answered {response.status_code} for {repo}")
    values = response.json().get("values") or []
    permission = str(values[0].get("permission") or "none") if values else "none"
    return RepoAccess(read=permission != "none", push=permission in WRITE_PERMISSIONS)


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /site/oauth2/access_token` with `grant_type=refresh_token` (the consumer by HTTP
    Basic): new tokens. A revoked or unknown refresh token is a 400 `invalid_grant`."""
    found = client(settings)
    if found is None:
        raise ForgeUnreachableError("Bitbucket sign-in is not configured; no token can be renewed")
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    try:
        response = httpx.post(
            found.access_token_url,
            data=form,
            auth=(found.client_id, found.client_secret),
            headers={"Accept": "application/json"},
            timeout=TIMEOUT,
        )
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"Bitbucket did not answer: {type(error).__name__}") from None
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    if response.status_code in (400, 401) and answer.get("error") in REFUSED:
        raise RefreshRefusedError("Bitbucket refused the refresh token")
    if response.status_code != 200 or "access_token" not in answer:
        problem = answer.get("error") or "no token"
        raise ForgeUnreachableError(
            f"Bitbucket did not renew the token ({response.status_code} {problem})"
        )
    return issued_token(answer)


SIGN_IN: Final = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("bitbucket_client_id", "bitbucket_client_secret"),
)
