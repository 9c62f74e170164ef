"""Registering Resolver's Linear webhook (`webhookCreate`) with a signing secret, and rotating it
(`webhookUpdate`), over httpx. Managing webhooks needs an admin's API key (or an OAuth token
with the `admin` scope). https://linear.app/developers/webhooks
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

import httpx

from integrations.linear.client import ERRORS, authorization
from integrations.linear.routes import ROUTES
from integrations.linear.settings import LinearSettings
from integrations.toolkit.answers import fields, items, read, text
from integrations.toolkit.http import bounded_client
from integrations.toolkit.limits import Limits
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
from resolver.core.logs import redact, register_secret
from resolver.core.settings import Settings

TIMEOUT_SECONDS: Final = 30.0
RESOURCE_TYPES: Final = tuple(sorted({key.split(".", 1)[0] for key in ROUTES}))
"""The payload types Resolver routes (`Comment`, `Issue`), no more."""
SCOPE_HELP: Final = "a team id to limit the webhook to that team; none for all public teams"
T = TypeVar("T")

WEBHOOKS: Final = "query ResolverWebhooks { webhooks(first: 250) { nodes { id url } } }"
CREATE: Final = """mutation ResolverWebhookCreate($input: WebhookCreateInput!) {
  webhookCreate(input: $input) { success webhook { id secret } }
}"""
UPDATE: Final = """mutation ResolverWebhookUpdate($id: String!, $input: WebhookUpdateInput!) {
  webhookUpdate(id: $id, input: $input) { success webhook { id secret } }
}"""


def _call(
    settings: Settings,
    credential: str,
    name: str,
    query: str,
    variables: dict[str, Any],
    shape: Callable[[dict[str, Any]], T],
) -> T:
    """The operation `name`'s `data` as `shape` reads it; SetupError for an error, or for an
    answer of the wrong shape."""
    register_secret(credential)
    headers = {"Authorization": authorization(credential), "User-Agent": "Resolver"}
    try:
        with bounded_client(Limits(seconds=TIMEOUT_SECONDS)) as http:
            answer = http.post(
                LinearSettings.of(settings).api_url,
                json={"query": query, "variables": variables},
                headers=headers,
            )
    except httpx.HTTPError as error:
        reason = f"Linear at {LinearSettings.of(settings).api_url} could not be reached"
        raise SetupError(f"{reason}: {type(error).__name__}") from None
    try:
        document = answer.json()
    except ValueError:
        raise SetupError(f"Linear answered {answer.status_code} without JSON") from None
    errors = document.get("errors") if isinstance(document, dict) else None
    if errors or answer.status_code != 200:
        raise SetupError(_message(answer.status_code, errors if isinstance(errors, list) else []))
    try:
        return read(ERRORS, name, lambda: document, lambda found: shape(fields(found["data"])))
    except CallbackError as error:  # what was wrong with it, never its text
        raise SetupError(str(error)) from None


def _message(status: int, errors: list[Any]) -> str:
    first = errors[0] if errors and isinstance(errors[0], dict) else {}
    extensions = first.get("extensions")
    code = extensions.get("code") if isinstance(extensions, dict) else None
    if status == 401 or code == "AUTHENTICATION_ERROR":
        return "Linear refused the API key (401): give a valid key of a workspace admin"
    if code == "FORBIDDEN":
        return "the API key may not manage webhooks (FORBIDDEN): it must be a workspace admin's"
    return f"Linear answered {status}: {redact(str(first.get('message') or code))[:300]}"


def _input(request: HookRequest, label: str) -> dict[str, Any]:
    values: dict[str, Any] = {
        "url": request.url,
        "label": label,
        "resourceTypes": list(RESOURCE_TYPES),
        "secret": request.secret,
        "enabled": True,
    }
    return values


def _webhooks(data: dict[str, Any]) -> list[tuple[str, object]]:
    """Each webhook's id and URL."""
    return [
        (text(node["id"]), node.get("url")) for node in items(fields(data["webhooks"])["nodes"])
    ]


def _registered(operation: str) -> Callable[[dict[str, Any]], tuple[str, str | None] | None]:
    """The webhook `operation` registered: its id and the secret Linear keeps (None: ours);
    None when Linear answered `success: false`."""

    def shape(data: dict[str, Any]) -> tuple[str, str | None] | None:
        result = fields(data[operation])
        if result.get("success") is not True:
            return None
        hook = fields(result["webhook"])
        secret = hook.get("secret")
        return text(hook["id"]), None if secret is None else text(secret)

    return shape


def _ensure(settings: Settings, request: HookRequest, *, must_exist: bool) -> RegisteredHook:
    label = f"Resolver ({settings.bot_name})"
    listed = _call(settings, request.credential, "ResolverWebhooks", WEBHOOKS, {}, _webhooks)
    found = next((hook_id for hook_id, url in listed if url == request.url), None)
    if found is None and must_exist:
        raise SetupError(f"Linear has no webhook at {request.url}: register it first")
    if found is None:
        scope = {"teamId": request.scope} if request.scope else {"allPublicTeams": True}
        variables: dict[str, Any] = {"input": _input(request, label) | scope}
        operation, query = "webhookCreate", CREATE
    else:
        variables = {"id": found, "input": _input(request, label)}
        operation, query = "webhookUpdate", UPDATE
    done = _call(settings, request.credential, operation, query, variables, _registered(operation))
    if done is None:
        raise SetupError("Linear did not register the webhook (success: false)")
    hook_id, kept = done
    # Linear signs with the secret it keeps; where it chose its own, that one is stored.
    secret = kept or request.secret
    register_secret(secret)
    return RegisteredHook(hook_id, RESOURCE_TYPES, found is None, secret)


def register(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=False)


def rotate(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=True)


def _scope_of(options: Mapping[str, OptionValue]) -> str | None:
    team = options.get("team")
    return str(team) if team else None


SETUP: Final = ProviderSetup(
    webhook=WebhookSetup(
        register=register,
        rotate=rotate,
        secret_setting="linear_webhook_secret",
        scope_help=SCOPE_HELP,
        help="Register the Linear webhook (standard input: a workspace admin's API key).",
        options=(CliOption("team", ("--team",), "Only this team (its id); default all public."),),
        scope_of=_scope_of,
    )
)
