"""Linear's preflight: for each workspace with a stored token, the token works (`viewer`) and a
webhook to `/webhooks/linear` is enabled for the resource types `routes.ROUTES` acts on.
https://linear.app/developers/webhooks
"""

from __future__ import annotations

from typing import Any, Final

from integrations.linear.client import ERRORS, LinearClient
from integrations.linear.routes import ROUTES
from integrations.linear.settings import LinearSettings
from integrations.toolkit.answers import fields, items, read
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.errors import CallbackError
from resolver.contract.inbound import secret_value
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token, token_installations

TIMEOUT_SECONDS: Final = 10.0
PREFLIGHT: Final = """
query Preflight {
  viewer { id name }
  webhooks(first: 50) { nodes { id url enabled resourceTypes } }
}"""
TOKEN, HOOK = "linear token", "linear webhook"


def checks(scope: PreflightScope) -> list[Check]:
    settings = scope.settings
    workspaces = token_installations("linear")
    if workspaces:
        return [c for workspace in workspaces for c in workspace_checks(settings, workspace)]
    if secret_value(LinearSettings.of(settings).webhook_secret) is None:
        return []
    fix = (
        "no Linear token is stored, so replies cannot be posted: store an API key with "
        '`printf %s "$TOKEN" | resolver tokens set --provider linear --installation ORG_ID`'
    )
    return [Check(TOKEN, "fail", fix)]


def resource_types() -> list[str]:
    return list(dict.fromkeys(key.partition(".")[0] for key in ROUTES))


def workspace_checks(settings: Settings, workspace: str) -> list[Check]:
    token = stored_token("linear", installation=workspace, settings=settings)
    if token is None:
        return [Check(f"{TOKEN} {workspace}", "fail", "its token has expired")]
    register_secret(token)
    try:
        data = LinearClient(LinearSettings.of(settings).api_url, token).query(
            "Preflight", PREFLIGHT, TIMEOUT_SECONDS
        )
        viewer, hooks = read(ERRORS, "Preflight", lambda: data, _preflight)
    except CallbackError as error:
        return [Check(f"{TOKEN} {workspace}", "fail", f"{error}; store a working token")]
    found = Check(f"{TOKEN} {workspace}", "ok", f"acts as {viewer}")
    url = f"{settings.public_url.rstrip('/')}/webhooks/linear"
    return [found, webhook_check(workspace, hooks, url)]


def _preflight(data: dict[str, Any]) -> tuple[object, list[dict[str, Any]]]:
    """The viewer's name, and the webhooks listed, each one's resource types a list."""
    hooks = items(fields(data["webhooks"])["nodes"])
    if not all(isinstance(hook.get("resourceTypes") or [], list) for hook in hooks):
        raise TypeError("resourceTypes that are no list")
    return fields(data["viewer"]).get("name"), hooks


def webhook_check(workspace: str, hooks: list[dict[str, Any]], url: str) -> Check:
    name = f"{HOOK} {workspace}"
    hook = next((h for h in hooks if h.get("url") == url), None)
    if hook is None:
        return Check(name, "fail", f"no webhook to {url}: run `resolver setup linear`, or add "
                     "one under Settings > API > Webhooks")  # fmt: skip
    missing = [kind for kind in resource_types() if kind not in (hook.get("resourceTypes") or ())]
    if not hook.get("enabled") or missing:
        what = "enable it" if not hook.get("enabled") else f"add {', '.join(missing)} events"
        return Check(name, "fail", f"its webhook to {url} needs work: {what}")
    return Check(name, "ok", f"{url}, {', '.join(resource_types())}")
