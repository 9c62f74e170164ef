"""Forgejo's preflight (`resolver doctor`, `/setup`): the bot's token is accepted
(`GET /api/v1/user`), and on each repository Resolver knows the bot is an admin, so it may read
a requester's permission (`GET /repos/{owner}/{repo}/collaborators/{login}/permission`) and
see the repository's hooks. Never raises: every failure is a `fail` naming the fix."""

from __future__ import annotations

from typing import Final

from integrations.forgejo.client import ForgejoClient
from integrations.forgejo.settings import ForgejoSettings
from integrations.forgejo.tokens import bot_token
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.errors import CallbackError
from resolver.core.logs import register_secret

TOKEN: Final = "forgejo token"
ACCESS: Final = "forgejo access"
ADMIN_MODES: Final = frozenset({"admin", "owner"})


def checks(scope: PreflightScope) -> list[Check]:
    settings = scope.settings
    config = ForgejoSettings.of(settings)
    if not config.url:
        return []
    token = bot_token(settings)
    if token is None:
        if not config.webhook_enabled:
            return []
        fix = "set RESOLVER_FORGEJO_TOKEN to the bot account's access token"
        return [Check(TOKEN, "fail", f"no Forgejo token for {config.url}, so nothing can be "
                      f"posted: {fix}")]  # fmt: skip
    register_secret(token)
    client = ForgejoClient(config.url, lambda: token, user_agent=f"Resolver ({settings.bot_name})")
    try:
        login = client.authenticated_login()
    except CallbackError as error:
        return [Check(TOKEN, "fail", f"{error}; set RESOLVER_FORGEJO_TOKEN to a working token")]
    found = [Check(TOKEN, "ok", f"acts as @{login} on {config.url}")]
    if not scope.repositories:
        return [*found, Check(ACCESS, "off", "no Forgejo repository known yet: the bot's access "
                              "is checked once a route or a job names one")]  # fmt: skip
    return found + [_admin(client, repo, login) for repo in scope.repositories]


def _admin(client: ForgejoClient, repo: str, login: str) -> Check:
    name = f"{ACCESS} {repo}"
    try:
        mode = client.permission(repo, login)
    except CallbackError as error:
        return Check(name, "fail", f"{error}; make @{login} an admin of {repo}")
    if mode not in ADMIN_MODES:
        return Check(name, "fail", f"@{login} has {mode} access to {repo}: make it an admin, so "
                     "it may read who may write")  # fmt: skip
    return Check(name, "ok", f"@{login} administers {repo}")
