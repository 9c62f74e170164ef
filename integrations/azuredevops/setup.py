"""Registering Resolver's service hooks on an Azure DevOps project: what `/setup` and
`resolver setup azuredevops` do. One Web Hooks subscription per routed event
(`client.HOOK_EVENTS`), for one repository's Git events and its project's work items, each
sending a new password (kept as `azuredevops_webhook_password`) and a new secret header
(`azuredevops_webhook_header_secret`). A public URL that is plain http is refused: Microsoft
requires HTTPS for a hook with basic auth. The admin's token is used for this one call.
https://learn.microsoft.com/azure/devops/service-hooks/create-subscription
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from integrations.azuredevops.hooks import HOOK_EVENTS, HookClient, subscription_form
from integrations.azuredevops.settings import AzureDevOpsSettings
from resolver.contract.errors import CallbackError
from resolver.contract.setup import (
    CliOption,
    HookRequest,
    OptionValue,
    ProviderSetup,
    RegisteredHook,
    SetupError,
    WebhookSetup,
)
from resolver.core.logs import register_secret
from resolver.core.settings import Settings

SCOPE_HELP: Final = "Project/Repository: its Git events and its project's work items"
LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "::1"})


def check_hook_url(url: str) -> None:
    """HTTPS, or a loopback address (a hook a developer points at their own machine)."""
    parts = urlsplit(url)
    if parts.scheme != "https" and parts.hostname not in LOOPBACK:
        raise SetupError(
            f"{url} is not HTTPS: Azure DevOps sends basic-auth credentials only over HTTPS; "
            "set RESOLVER_PUBLIC_URL to the https:// address Resolver is reached at"
        )


def _client(settings: Settings, credential: str) -> HookClient:
    config = AzureDevOpsSettings.of(settings)
    if not config.url:
        raise SetupError("set RESOLVER_AZUREDEVOPS_URL to the organisation's address first")
    register_secret(credential)
    return HookClient(config.url, lambda: credential, user_agent=f"Resolver ({settings.bot_name})")


def _explained(scope: str, error: CallbackError) -> SetupError:
    if error.status == 401:
        return SetupError("Azure DevOps refused the token (401): give a valid admin's PAT")
    if error.status == 403:
        return SetupError(f"the token may not manage service hooks of {scope} (403)")
    if error.status == 404:
        return SetupError(f"Azure DevOps has no repository {scope} that this token can see")
    return SetupError(str(error))


def _ensure(settings: Settings, request: HookRequest, *, must_exist: bool) -> RegisteredHook:
    check_hook_url(request.url)
    scope = (request.scope or "").strip()
    if scope.count("/") != 1:
        raise SetupError(f"name where the hooks go: {SCOPE_HELP}")
    if request.signing_secret is None:
        raise SetupError("the secret header's value is missing")
    user = AzureDevOpsSettings.of(settings).webhook_user
    credentials = (user, request.secret, request.signing_secret)
    client = _client(settings, request.credential)
    try:
        project, repository = client.project_and_repository(scope)
        existing = {
            (s.event, s.project): s.id for s in client.subscriptions() if s.url == request.url
        }
        if must_exist and not existing:
            raise SetupError(f"no service hook points at {request.url}: register them first")
        ids = []
        for event, version in HOOK_EVENTS:
            form = subscription_form(event, version, request.url, credentials, project, repository)
            found = existing.get((event, project))
            if found is None:
                found = client.create_subscription(form)
            else:
                client.replace_subscription(found, form)
            ids.append(found)
    except CallbackError as error:
        raise _explained(scope, error) from None
    events = tuple(event for event, _ in HOOK_EVENTS)
    return RegisteredHook(",".join(ids), events, not existing, request.secret)


def register(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=False)


def rotate(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=True)


def _scope_of(options: Mapping[str, OptionValue]) -> str:
    repo = options.get("repo")
    if not isinstance(repo, str) or not repo:
        raise SetupError("give --repo Project/Repository")
    return repo


SETUP: Final = ProviderSetup(
    webhook=WebhookSetup(
        register=register,
        rotate=rotate,
        secret_setting="azuredevops_webhook_password",
        signing_setting="azuredevops_webhook_header_secret",
        scope_help=SCOPE_HELP,
        help="Register the Azure DevOps service hooks (standard input: a PAT of a project "
        "administrator, with the Service hooks: Read & write and Code: Read scopes).",
        options=(CliOption("repo", ("--repo",), "The repository (Project/Repository)."),),
        scope_of=_scope_of,
    )
)
