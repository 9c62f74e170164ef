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
from integrations.toolkit import oauth
from integrations.toolkit.answers import fields, text
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

NAME: Final = "azuredevops"
# Azure DevOps's resource id in Entra ID, and a refresh token with it.
SCOPE: Final = "499b84ac-1321-427f-aa17-267ca6975798/.default offline_access"
READ: Final = 2
VERSION: Final = {"api-version": "7.1"}
VENDOR: Final = "Azure DevOps"
# 203 is Azure DevOps's sign-in page, which it answers for a token it no longer takes.
SIGNED_OUT: Final = frozenset({401, 203})
GRANT: Final = oauth.RefreshGrant("Entra ID", form={"scope": SCOPE})


def client(settings: Settings) -> OAuthClient | None:
    config = AzureDevOpsSettings.of(settings)
    if not config.sign_in_enabled:
        return None
    return oauth.configured_client(
        config.client_id,
        config.client_secret,
        f"{config.login_url.rstrip('/')}/{config.tenant}/oauth2/v2.0",
        authorize="/authorize",
        token="/token",
        scope=SCOPE,
        secret_in_body=True,
    )


def _get(url: str, token: str, params: dict[str, str] | None = None) -> httpx.Response:
    query = {**(params or {}), **VERSION}
    return oauth.viewer_get(VENDOR, url, f"Bearer {token}", params=query, signed_out=SIGNED_OUT)


def _attribute(data: dict[str, Any], name: str) -> str | None:
    found = fields(data.get("coreAttributes") or {}).get(name) or {}
    value = found.get("value") if isinstance(found, dict) else None
    return str(value) if value else None


def _person(answer: object) -> Person:
    data = fields(answer)
    identity = text(data["id"])
    email = _attribute(data, "EmailAddress") or _attribute(data, "DisplayName") or identity
    return Person(NAME, identity, email.split("@", 1)[0])


def person(settings: Settings, token: str) -> Person:
    """The profile the token acts for: its id is the person's identity id."""
    base = AzureDevOpsSettings.of(settings).profile_url.rstrip("/")
    response = _get(f"{base}/_apis/profile/profiles/me", token, {"coreAttributes": "EmailAddress"})
    data = oauth.account_answer(VENDOR, response, "profile")
    return oauth.read_answer(VENDOR, lambda: data, _person)


def _security_tokens(answer: object) -> str:
    """The Git Repositories namespace's token of the repository (`repoV2/{project}/{id}`)."""
    data = fields(answer)
    return f"repoV2/{text(fields(data['project'])['id'])}/{text(data['id'])}"


def _allowed(answer: object) -> bool:
    found = fields(answer).get("value")
    return isinstance(found, list) and bool(found) and found[0] is True


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
    data = oauth.repo_answer(VENDOR, found, repo)
    if data is None:
        return NO_ACCESS
    tokens = oauth.read_answer(VENDOR, lambda: data, _security_tokens)

    def has(bit: int) -> bool:
        answer = _get(f"{url.rstrip('/')}/_apis/permissions/{GIT_NAMESPACE}/{bit}", token,
                      {"tokens": tokens})  # fmt: skip
        return answer.status_code == 200 and oauth.read_answer(VENDOR, answer.json, _allowed)

    return RepoAccess(read=has(READ), push=has(CONTRIBUTE))


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """The token endpoint with `grant_type=refresh_token`: new tokens. A used, revoked or
    unknown refresh token is a 400 `invalid_grant`."""
    return oauth.refresh_grant(GRANT, client(settings), refresh_token)


SIGN_IN: Final = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("azuredevops_client_id", "azuredevops_client_secret"),
)
