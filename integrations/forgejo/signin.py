"""Signing in to the web app with Forgejo (or Gitea): an OAuth2 application on the instance,
the account a token acts for (`GET /api/v1/user`), what it may do on a repository, and renewing
it (Forgejo's access tokens last an hour; a refresh rotates the refresh token).
https://forgejo.org/docs/latest/user/oauth2-provider/
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote

import httpx

from integrations.forgejo.client import API_PREFIX, WRITE_MODES, split_repo
from integrations.forgejo.settings import ForgejoSettings
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
NAME: Final = "forgejo"
# Forgejo's scoped-token scopes; an OAuth2 grant without one acts with all the user's rights.
SCOPE: Final = "read:user read:repository"
REFUSED: Final = frozenset({"invalid_grant", "unauthorized_client"})


def _base(settings: Settings) -> str | None:
    url = ForgejoSettings.of(settings).url
    return url.rstrip("/") if url else None


def client(settings: Settings) -> OAuthClient | None:
    config = ForgejoSettings.of(settings)
    secret = secret_value(config.client_secret)
    base = _base(settings)
    if not base or not config.client_id or secret is None:
        return None
    return OAuthClient(
        client_id=config.client_id,
        client_secret=secret,
        authorize_url=f"{base}/login/oauth/authorize",
        access_token_url=f"{base}/login/oauth/access_token",
        scope=SCOPE,
        secret_in_body=True,
    )


def _get(settings: Settings, token: str, path: str) -> httpx.Response:
    base = _base(settings)
    if base is None:
        raise ForgeUnreachableError("no Forgejo instance is configured (RESOLVER_FORGEJO_URL)")
    headers = {"Authorization": f"token {token}", "Accept": "application/json"}
    try:
        response = httpx.get(base + API_PREFIX + path, headers=headers, timeout=TIMEOUT)
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"Forgejo did not answer: {type(error).__name__}") from None
    if response.status_code == 401:
        raise SignInError("Forgejo no longer accepts your sign-in")
    if response.status_code >= 500:
        raise ForgeUnreachableError(f"Forgejo answered {response.status_code}")
    return response


def person(settings: Settings, token: str) -> Person:
    """`GET /api/v1/user`: the account the token acts for."""
    response = _get(settings, token, "/user")
    if response.status_code != 200:
        raise SignInError(f"Forgejo answered {response.status_code} for your account")
    data = response.json()
    return Person(NAME, str(data["id"]), str(data["login"]))


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
    response = _get(settings, token, path)
    if response.status_code in (403, 404):
        return NO_ACCESS
    if response.status_code != 200:
        raise ForgeUnreachableError(f"Forgejo answered {response.status_code} for {repo}")
    mode = str(response.json().get("permission") or "none")
    return RepoAccess(read=mode != "none", push=mode in WRITE_MODES)


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /login/oauth/access_token` with `grant_type=refresh_token`: new tokens. A used,
    revoked or unknown refresh token is a 400 `invalid_grant` (RFC 6749 section 5.2)."""
    found = client(settings)
    if found is None:
        raise ForgeUnreachableError("Forgejo sign-in is not configured; no token can be renewed")
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
        raise ForgeUnreachableError(f"Forgejo did not answer: {type(error).__name__}") from None
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    if response.status_code in (400, 401) and answer.get("error") in REFUSED:
        raise RefreshRefusedError("Forgejo refused the refresh token")
    if response.status_code != 200 or "access_token" not in answer:
        problem = answer.get("error") or "no token"
        raise ForgeUnreachableError(
            f"Forgejo did not renew the token ({response.status_code} {problem})"
        )
    return issued_token(answer)


SIGN_IN: Final = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("forgejo_client_id", "forgejo_client_secret"),
)
