"""Registering Resolver's webhook on a Forgejo (or Gitea) repository or organisation: what
`/setup` and `resolver setup forgejo` do. The hook is signed with a new secret, which is kept
as `forgejo_webhook_secret`, and sends exactly the events `routes.ROUTES` acts on
(`client.HOOK_EVENTS`). The admin's token is used for this one call and never kept.
https://forgejo.org/docs/latest/user/webhooks/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from integrations.forgejo.client import HOOK_EVENTS, ForgejoClient
from integrations.forgejo.settings import ForgejoSettings
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

SCOPE_HELP: Final = "repo:OWNER/NAME for a repository hook, or org:NAME for an organisation's"


def parse_scope(scope: str | None) -> tuple[str, str]:
    """`repo:owner/name`, `org:name` or a bare `owner/name` → (kind, name)."""
    if not scope or not scope.strip():
        raise SetupError(f"name where the Forgejo hook goes: {SCOPE_HELP}")
    kind, sep, name = scope.strip().partition(":")
    if not sep:
        kind, name = "repo", scope.strip()
    if kind not in ("repo", "org") or not name or (kind == "repo") != ("/" in name):
        raise SetupError(f"{scope!r} is not a Forgejo hook scope: {SCOPE_HELP}")
    return kind, name


def _client(settings: Settings, credential: str) -> ForgejoClient:
    url = ForgejoSettings.of(settings).url
    if not url:
        raise SetupError("set RESOLVER_FORGEJO_URL to the instance's address first")
    register_secret(credential)
    return ForgejoClient(url, lambda: credential, user_agent=f"Resolver ({settings.bot_name})")


def _explained(kind: str, name: str, error: CallbackError) -> SetupError:
    status = error.status
    if status == 401:
        return SetupError("Forgejo refused the token (401): give a valid token of an admin")
    if status == 403:
        role = "an owner of the organisation" if kind == "org" else "an admin of the repository"
        return SetupError(f"the token may not manage the hooks of {kind} {name} (403): {role}")
    if status == 404:
        return SetupError(f"Forgejo has no {kind} {name} that this token can see (404)")
    return SetupError(str(error))


def _ensure(settings: Settings, request: HookRequest, *, must_exist: bool) -> RegisteredHook:
    """The hook at `request.url`, created, or edited with the new secret and the routed
    events (Forgejo never shows a hook's secret, so an edit always sets it)."""
    kind, name = parse_scope(request.scope)
    client = _client(settings, request.credential)
    org = kind == "org"
    try:
        existing = client.hooks(name, org=org)
        found = next((hook_id for hook_id, url in existing if url == request.url), None)
        if found is None and must_exist:
            raise SetupError(f"{kind} {name} has no hook at {request.url}: register it first")
        if found is not None:
            hook_id = found
            client.edit_hook(name, hook_id, request.url, request.secret, org=org)
        elif org:
            hook_type = ForgejoSettings.of(settings).hook_type
            hook_id = client.create_org_hook(name, request.url, request.secret, hook_type)
        else:
            hook_type = ForgejoSettings.of(settings).hook_type
            hook_id = client.create_repo_hook(name, request.url, request.secret, hook_type)
    except CallbackError as error:
        raise _explained(kind, name, error) from None
    return RegisteredHook(str(hook_id), HOOK_EVENTS, found is None, request.secret)


def register(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=False)


def rotate(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=True)


def _scope_of(options: Mapping[str, OptionValue]) -> str:
    repo, org = options.get("repo"), options.get("org")
    if (repo is None) == (org is None):
        raise SetupError("give exactly one of --repo or --org")
    return f"repo:{repo}" if repo else f"org:{org}"


SETUP: Final = ProviderSetup(
    webhook=WebhookSetup(
        register=register,
        rotate=rotate,
        secret_setting="forgejo_webhook_secret",
        scope_help=SCOPE_HELP,
        help="Register the Forgejo webhook (standard input: a token of a repository admin, or "
        "of an organisation owner, with the write:repository or write:organization scope).",
        options=(
            CliOption("repo", ("--repo",), "The repository (owner/name)."),
            CliOption("org", ("--org",), "An organisation instead: every repository of it."),
        ),
        scope_of=_scope_of,
    )
)
