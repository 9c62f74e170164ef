"""Bitbucket's preflight (`resolver doctor`, `/setup`): the bot's token is accepted
(`GET /2.0/user`), and on each repository Resolver knows the bot is an admin, so it may read a
requester's permission (`GET /workspaces/{workspace}/permissions/repositories/{repo_slug}`).
Never raises: every failure is a `fail` naming the fix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from integrations.bitbucket.client import ERRORS, BitbucketClient
from integrations.bitbucket.settings import BitbucketSettings
from integrations.bitbucket.tokens import bot_token
from integrations.toolkit import answers
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.errors import CallbackError
from resolver.core.logs import register_secret
from resolver.core.settings import Settings

TOKEN: Final = "bitbucket token"
ACCESS: Final = "bitbucket access"
UNSIGNED: Final = "bitbucket webhook"


def checks(scope: PreflightScope) -> list[Check]:
    settings = scope.settings
    config = BitbucketSettings.of(settings)
    found = _unsigned(config)
    token = bot_token(settings)
    if token is None:
        if not config.webhook_enabled:
            return found
        fix = "set RESOLVER_BITBUCKET_TOKEN to the bot's access token"
        return [
            *found,
            Check(TOKEN, "fail", f"no Bitbucket token, so nothing can be posted: {fix}"),
        ]
    register_secret(token)
    user_agent = f"Resolver ({settings.bot_name})"
    client = BitbucketClient(config.api_url, lambda: token, user_agent=user_agent)
    try:
        me = client.authenticated_user()
        with answers.reading(ERRORS, "GET /user"):
            uuid, login = _account(me)
    except CallbackError as error:
        return [
            *found,
            Check(TOKEN, "fail", f"{error}; set RESOLVER_BITBUCKET_TOKEN to a working token"),
        ]
    found.append(
        Check(TOKEN, "ok", f"acts as {login} on {config.api_url}{_by_account(me, settings)}")
    )
    if not scope.repositories:
        return [*found, Check(ACCESS, "off", "no Bitbucket repository known yet: the bot's "
                              "access is checked once a route or a job names one")]  # fmt: skip
    return found + [_admin(client, repo, uuid, login) for repo in scope.repositories]


def _account(me: Mapping[str, object]) -> tuple[str, str]:
    """The account's uuid, which its permissions are asked by, and the name it goes by."""
    uuid = answers.text(me["uuid"])
    return uuid, answers.text(me.get("nickname") or me.get("display_name") or uuid)


def _by_account(me: Mapping[str, object], settings: Settings) -> str:
    """What to add for a mention the editor completes (`@{account_id}`) to count, if needed."""
    account = str(me.get("account_id") or "")
    known = {i.strip().strip("{}") for i in settings.bot_account_ids.split(",")}
    if not account or account in known:
        return ""
    return (
        f"; add {account} to RESOLVER_BOT_ACCOUNT_IDS so that a mention picked from Bitbucket's "
        "list (`@{account_id}`) reaches the bot"
    )


def _unsigned(config: BitbucketSettings) -> list[Check]:
    if config.allow_unsigned and config.webhook_secret is None:
        return [Check(UNSIGNED, "fail", "deliveries are accepted unsigned "
                      "(RESOLVER_BITBUCKET_ALLOW_UNSIGNED): give the hook a secret and set "
                      "RESOLVER_BITBUCKET_WEBHOOK_SECRET")]  # fmt: skip
    return []


def _admin(client: BitbucketClient, repo: str, uuid: str, login: str) -> Check:
    name = f"{ACCESS} {repo}"
    try:
        permission = client.permission(repo, uuid)
    except CallbackError as error:
        return Check(name, "fail", f"{error}; make {login} an admin of {repo}")
    if permission != "admin":
        return Check(name, "fail", f"{login} has {permission} access to {repo}: make it an admin "
                     "(repository:admin), so it may read who may write")  # fmt: skip
    return Check(name, "ok", f"{login} administers {repo}")
