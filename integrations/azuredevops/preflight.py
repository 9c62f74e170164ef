"""Azure DevOps's preflight (`resolver doctor`, `/setup`): the service hooks can reach Resolver
over HTTPS, the bot's token is accepted, and on each repository Resolver knows the bot may read
who may contribute (the Git Repositories namespace's ACL, which needs Security: manage).
Never raises: every failure is a `fail` naming the fix."""

from __future__ import annotations

from typing import Final

from integrations.azuredevops.client import AzureDevOpsClient
from integrations.azuredevops.settings import AzureDevOpsSettings
from integrations.azuredevops.setup import check_hook_url
from integrations.azuredevops.tokens import bot_token
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.errors import CallbackError
from resolver.contract.setup import SetupError
from resolver.core.logs import register_secret

HOOKS: Final = "azuredevops hooks"
TOKEN: Final = "azuredevops token"
ACCESS: Final = "azuredevops access"


def checks(scope: PreflightScope) -> list[Check]:
    settings = scope.settings
    config = AzureDevOpsSettings.of(settings)
    if not config.url:
        return []
    found = [_https(f"{settings.public_url.rstrip('/')}/webhooks/azuredevops")]
    token = bot_token(settings)
    if token is None:
        fix = "set RESOLVER_AZUREDEVOPS_TOKEN to the bot's personal access token"
        return [*found, Check(TOKEN, "fail", f"no token for {config.url}: {fix}")]
    register_secret(token)
    client = AzureDevOpsClient(
        config.url, lambda: token, identities=config.identities, user_agent="Resolver"
    )
    if not scope.repositories:
        return [*found, Check(ACCESS, "off", "no Azure DevOps repository known yet: the bot's "
                              "access is checked once a route or a job names one")]  # fmt: skip
    return found + [_access(client, repo) for repo in scope.repositories]


def _https(url: str) -> Check:
    try:
        check_hook_url(url)
    except SetupError as error:
        return Check(HOOKS, "fail", str(error))
    return Check(HOOKS, "ok", f"service hooks post to {url}")


def _access(client: AzureDevOpsClient, repo: str) -> Check:
    """The repository is readable, and so is its ACL."""
    name = f"{ACCESS} {repo}"
    try:
        client.access_lists(repo)
    except CallbackError as error:
        return Check(name, "fail", f"{error}; add the bot to Project Administrators of {repo}, "
                     "or grant it Manage permissions on the repository")  # fmt: skip
    return Check(name, "ok", f"the bot reads {repo} and who may contribute to it")
