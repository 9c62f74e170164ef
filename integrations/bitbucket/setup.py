"""Registering Resolver's webhook on a Bitbucket repository or workspace: what `/setup` and
`resolver setup bitbucket` do. The hook is signed with a new secret, kept as
`bitbucket_webhook_secret`, and sends exactly the Cloud events `routes.ROUTES` acts on
(`client.HOOK_EVENTS`). The admin's token is used for this one call and never kept.
https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from integrations.bitbucket.client import HOOK_EVENTS, BitbucketClient
from integrations.bitbucket.settings import BitbucketSettings
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

SCOPE_HELP: Final = "repo:WORKSPACE/SLUG for a repository hook, or workspace:NAME for a workspace's"


def parse_scope(scope: str | None) -> tuple[str, str]:
    """`repo:workspace/slug`, `workspace:name` or a bare `workspace/slug` → (kind, name)."""
    if not scope or not scope.strip():
        raise SetupError(f"name where the Bitbucket hook goes: {SCOPE_HELP}")
    kind, sep, name = scope.strip().partition(":")
    if not sep:
        kind, name = "repo", scope.strip()
    if kind not in ("repo", "workspace") or not name or (kind == "repo") != ("/" in name):
        raise SetupError(f"{scope!r} is not a Bitbucket hook scope: {SCOPE_HELP}")
    return kind, name


def _explained(kind: str, name: str, error: CallbackError) -> SetupError:
    status = error.status
    if status == 401:
        return SetupError("Bitbucket refused the token (401): give a valid admin's access token")
    if status == 403:
        return SetupError(f"the token may not manage the webhooks of {kind} {name} (403): use an "
                          f"admin's token with the webhook scope")  # fmt: skip
    if status == 404:
        return SetupError(f"Bitbucket has no {kind} {name} that this token can see (404)")
    return SetupError(str(error))


def _ensure(settings: Settings, request: HookRequest, *, must_exist: bool) -> RegisteredHook:
    """The hook at `request.url`, created, or edited with the new secret and the routed events
    (Bitbucket never shows a hook's secret, so an edit always sets it)."""
    kind, name = parse_scope(request.scope)
    register_secret(request.credential)
    api = BitbucketSettings.of(settings).api_url
    user_agent = f"Resolver ({settings.bot_name})"
    client = BitbucketClient(api, lambda: request.credential, user_agent=user_agent)
    workspace = kind == "workspace"
    try:
        existing = client.hooks(name, workspace=workspace)
        found = next((uid for uid, url in existing if url == request.url), None)
        if found is None and must_exist:
            raise SetupError(f"{kind} {name} has no hook at {request.url}: register it first")
        if found is not None:
            uid = found
            client.edit_hook(name, uid, request.url, request.secret, workspace=workspace)
        else:
            uid = client.create_hook(name, request.url, request.secret, workspace=workspace)
    except CallbackError as error:
        raise _explained(kind, name, error) from None
    return RegisteredHook(uid, HOOK_EVENTS, found is None, request.secret)


def register(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=False)


def rotate(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=True)


def _scope_of(options: Mapping[str, OptionValue]) -> str:
    repo, workspace = options.get("repo"), options.get("workspace")
    if (repo is None) == (workspace is None):
        raise SetupError("give exactly one of --repo or --workspace")
    return f"repo:{repo}" if repo else f"workspace:{workspace}"


SETUP: Final = ProviderSetup(
    webhook=WebhookSetup(
        register=register,
        rotate=rotate,
        secret_setting="bitbucket_webhook_secret",
        scope_help=SCOPE_HELP,
        help="Register the Bitbucket webhook (standard input: an access token of a repository "
        "or workspace admin, with the webhook scope).",
        options=(
            CliOption("repo", ("--repo",), "The repository (workspace/slug)."),
            CliOption("workspace", ("--workspace",), "A workspace instead: all its repositories."),
        ),
        scope_of=_scope_of,
    )
)
