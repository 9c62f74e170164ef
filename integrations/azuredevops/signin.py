"""Signing in to the web app with Microsoft Entra ID, for Azure DevOps Services: an app
registration with the delegated Azure DevOps permission, the person's Azure DevOps profile
(`GET _apis/profile/profiles/me`: its id is the identity id service hooks send), what they may
do on a repository (their own Git Repositories permissions, `GET _apis/permissions/…`), and
renewing the token (Entra's access tokens last about an hour; a refresh rotates the refresh
token). https://learn.microsoft.com/azure/devops/integrate/get-started/authentication/entra-oauth
"""

from __future__ import annotations

from typing import Any, Final

import httpx

from integrations.azuredevops.client import CONTRIBUTE, GIT_NAMESPACE, split_repo
from integrations.azuredevops.settings import AzureDevOpsSettings
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
NAME: Final = "azuredevops"
# Azure DevOps's resource id in Entra ID, and a refresh token with it.
SCOPE: Final = "499b84ac-1321-427f-aa17-267ca6975798/.default offline_access"
READ: Final = 2
REFUSED: Final = frozenset({"invalid_grant", "unauthorized_client"})
VERSION: Final = {"api-version": "7.1"}


def client(settings: Settings) -> OAuthClient | None:
    config = AzureDevOpsSettings.of(settings)
    secret = secret_value(config.client_secret)
    if not config.sign_in_enabled or secret is None or not config.client_id:
        return None
    authority = f"{config.login_url.rstrip('/')}/{config.tenant}/oauth2/v2.0"
    return OAuthClient(
        client_id=config.client_id,
        client_secret=secret,
        authorize_url=f"{authority}/authorize",
        access_token_url=f"{authority}/token",
        scope=SCOPE,
        secret_in_body=True,
    )


def _get(url: str, token: str, params: dict[str, str] | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    try:
        response = httpx.get(url, headers=headers, params={**(params or {}), **VERSION},
                             timeout=TIMEOUT)  # fmt: skip
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(
            f"Azure DevOps did not answer: {type(error).__name__}"
        ) from None
    if response.status_code in (401, 203):
        raise SignInError("Azure DevOps no longer accepts your sign-in")
    if response.status_code >= 500:
        raise ForgeUnreachableError(f"Azure DevOps answered {response.status_code}")
    return response


def _attribute(data: dict[str, Any], name: str) -> str | None:
    found = (data.get("coreAttributes") or {}).get(name) or {}
    value = found.get("value") if isinstance(found, dict) else None
    return str(value) if value else None


def person(settings: Settings, token: str) -> Person:
    """The profile the token acts for: its id is the person's identity id."""
    base = AzureDevOpsSettings.of(settings).profile_url.rstrip("/")
    response = _get(f"{base}/_apis/profile/profiles/me", token, {"coreAttributes": "EmailAddress"})
    if response.status_code != 200:
        raise SignInError(f"Azure DevOps answered {response.status_code} for your profile")
    data = response.json()
    email = _attribute(data, "EmailAddress") or _attribute(data, "DisplayName") or data["id"]
    return Person(NAME, str(data["id"]), email.split("@", 1)[0])


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """The viewer's own Read and Contribute on the repository (a repository they cannot see
    is a 404, which is no access)."""
    url = AzureDevOpsSettings.of(settings).url
    if not url:
        raise ForgeUnreachableError("no Azure DevOps organisation is configured")
    try:
        project, name = split_repo(repo)
    except PermanentCallbackError:
        return NO_ACCESS
    found = _get(f"{url.rstrip('/')}/{project}/_apis/git/repositories/{name}", token)
    if found.status_code in (403, 404):
        return NO_ACCESS
    data = found.json()
    tokens = f"repoV2/{data['project']['id']}/{data['id']}"

    def has(bit: int) -> bool:
        answer = _get(f"{url.rstrip('/')}/_apis/permissions/{GIT_NAMESPACE}/{bit}", token,
                      {"tokens": tokens})  # fmt: skip
        values = answer.json().get("value") if answer.status_code == 200 else None
        return bool(values and values[0] is True)

    return RepoAccess(read=has(READ), push=has(CONTRIBUTE))


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """The token endpoint with `grant_type=refresh_token`: new tokens. A used, revoked or
    unknown refresh token is a 400 `invalid_grant`."""
    found = client(settings)
    if found is None:
        raise ForgeUnreachableError("Entra ID sign-in is not configured; no token can be renewed")
    form = {
        "client_id": found.client_id,
        "client_secret": found.client_secret,
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "scope": SCOPE,
    }
    try:
        response = httpx.post(found.access_token_url, data=form, timeout=TIMEOUT)
    except httpx.HTTPError as error:
        raise ForgeUnreachableError(f"Entra ID did not answer: {type(error).__name__}") from None
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    if response.status_code in (400, 401) and answer.get("error") in REFUSED:
        raise RefreshRefusedError("Entra ID refused the refresh token")
    if response.status_code != 200 or "access_token" not in answer:
        raise ForgeUnreachableError(f"Entra ID did not renew the token ({response.status_code})")
    return issued_token(answer)


SIGN_IN: Final = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("azuredevops_client_id", "azuredevops_client_secret"),
)
