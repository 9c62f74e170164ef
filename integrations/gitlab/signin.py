"""Signing in to the web app with GitLab: an OAuth application's web flow, what the viewer's
own token may do on a project, and renewing that token (every refresh rotates the refresh token).
https://docs.gitlab.com/api/oauth2/ https://docs.gitlab.com/api/projects/#get-a-single-project
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from integrations.gitlab.settings import GitLabSettings
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

VENDOR = "GitLab"
DEVELOPER = 30  # the lowest access level that may push


def client(settings: Settings) -> OAuthClient | None:
    config = GitLabSettings.of(settings)
    return oauth.configured_client(
        config.client_id,
        config.client_secret,
        config.url,
        authorize="/oauth/authorize",
        token="/oauth/token",
        scope="read_api",
    )


def _get(settings: Settings, token: str, path: str) -> httpx.Response:
    url = GitLabSettings.of(settings).url.rstrip("/") + "/api/v4" + path
    return oauth.viewer_get(VENDOR, url, f"Bearer {token}", headers={})


def person(settings: Settings, token: str) -> Person:
    """`GET /user`: the account the token acts for."""
    data = oauth.account_answer(VENDOR, _get(settings, token, "/user"))
    return oauth.read_answer(VENDOR, lambda: data, _person)


def _person(data: dict[str, Any]) -> Person:
    """The account's numeric id, never its username, is the identity."""
    return Person("gitlab", str(number(data["id"])), text(data["username"]))


def _level(permissions: dict[str, Any], key: str) -> int:
    """An access level of the viewer's; none (null) is 0, anything but a number is no answer."""
    found = permissions.get(key)
    if found is None:
        return 0
    level = fields(found).get("access_level") or 0
    if not isinstance(level, int) or isinstance(level, bool):
        raise TypeError(f"{type(level).__name__} where an access level was due")
    return level


def access(settings: Settings, token: str, repo: str) -> RepoAccess:
    """GitLab answers 404 for a project the token cannot read, and reports the viewer's own
    and inherited access levels on one it can."""
    data = oauth.repo_answer(
        VENDOR, _get(settings, token, f"/projects/{quote(repo, safe='')}"), repo
    )
    if data is None:
        return NO_ACCESS
    return oauth.read_answer(VENDOR, lambda: data, _access)


def _access(data: dict[str, Any]) -> RepoAccess:
    """The viewer's own and inherited access levels on a project they can read."""
    permissions = fields(data.get("permissions") or {})
    level = max(_level(permissions, "project_access"), _level(permissions, "group_access"))
    return RepoAccess(read=True, push=level >= DEVELOPER)


def refresh(settings: Settings, refresh_token: str) -> IssuedToken:
    """`POST /oauth/token` with `grant_type=refresh_token`: new tokens, the old ones revoked.
    A revoked, used or unknown refresh token is a 400 `invalid_grant` (RFC 6749 section 5.2)."""
    done = f"{settings.public_url.rstrip('/')}/signin/gitlab/done"
    grant = oauth.RefreshGrant(
        VENDOR,
        form={"redirect_uri": done},
        refusals=frozenset({"invalid_grant"}),
        refusal_statuses=frozenset({400}),
    )
    return oauth.refresh_grant(grant, client(settings), refresh_token)


SIGN_IN = SignIn(
    client=client,
    person=person,
    access=access,
    refresh=refresh,
    client_settings=("gitlab_client_id", "gitlab_client_secret"),
)
