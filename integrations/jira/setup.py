"""Registering Resolver's Jira webhook as an admin webhook (`/rest/webhooks/1.0/webhook`), with a
secret, and rotating it, through the `jira` library's session.

Only admin webhooks are signed (`X-Hub-Signature`, what `verify.py` checks); the dynamic
webhooks of `/rest/api/3/webhook` are for Connect and OAuth 2.0 apps and carry no HMAC.
Registering one needs the Administer Jira permission.
https://developer.atlassian.com/cloud/jira/platform/webhooks/#registering-a-webhook-using-the-jira-rest-api
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import requests
from jira.exceptions import JIRAError

from integrations.jira.client import ERRORS, jira_session
from integrations.jira.routes import ROUTES
from integrations.jira.settings import JiraSettings
from integrations.toolkit.answers import fields, items, read, text
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
from resolver.core.logs import redact
from resolver.core.settings import Settings

PATH: Final = "/rest/webhooks/1.0/webhook"
LIST, CREATE = f"GET {PATH}", f"POST {PATH}"
EVENTS: Final = tuple(sorted(ROUTES))
"""The `webhookEvent`s Resolver routes, no more."""
PROJECT_KEY: Final = re.compile(r"[A-Z][A-Z0-9_]{0,254}")
SCOPE_HELP: Final = "a project key (PROJ) to limit the webhook to it; none for every project"


def _site(settings: Settings) -> str:
    site = JiraSettings.of(settings).url
    if not site:
        raise SetupError("RESOLVER_JIRA_URL is not set: name the Jira site first")
    return site.rstrip("/")


def _body(request: HookRequest, name: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": name,
        "url": request.url,
        "events": list(EVENTS),
        "excludeBody": False,
        "secret": request.secret,
    }
    if request.scope:
        if not PROJECT_KEY.fullmatch(request.scope):
            raise SetupError(f"{request.scope!r} is not a Jira project key: {SCOPE_HELP}")
        body["filters"] = {"issue-related-events-section": f"project = {request.scope}"}
    return body


@contextmanager
def _explained(site: str) -> Iterator[None]:
    try:
        yield
    except CallbackError as error:  # an answer of the wrong shape: what it was, never its text
        raise SetupError(str(error)) from None
    except JIRAError as error:
        raise SetupError(_message(site, error.status_code, error.text)) from None
    except requests.RequestException as error:
        raise SetupError(f"Jira at {site} could not be reached: {type(error).__name__}") from None


def _message(site: str, status: int | None, text: object) -> str:
    if status == 401:
        return f"Jira at {site} refused the credential (401): give email:api_token of an admin"
    if status == 403:
        return (
            f"the credential may not manage webhooks on {site} (403): it needs the "
            "Administer Jira global permission"
        )
    return f"Jira at {site} answered {status} to {PATH}: {redact(str(text or ''))[:300]}"


def _hook_id(hook: object) -> str:
    """The id at the end of the hook's `self` link (`…/rest/webhooks/1.0/webhook/7`)."""
    return text(text(fields(hook)["self"]).rstrip("/").rsplit("/", 1)[-1])


def _ensure(settings: Settings, request: HookRequest, *, must_exist: bool) -> RegisteredHook:
    site = _site(settings)
    body = _body(request, f"Resolver ({settings.bot_name})")
    jira = jira_session(site, request.credential)
    with _explained(site):
        hooks = read(ERRORS, LIST, jira._session.get(site + PATH).json, items)
        found = next((h for h in hooks if h.get("url") == request.url), None)
        if found is None and must_exist:
            raise SetupError(f"Jira at {site} has no webhook at {request.url}: register it first")
        if found is None:
            created = jira._session.post(site + PATH, json=body)
            hook_id = read(ERRORS, CREATE, created.json, _hook_id)
        else:
            hook_id = read(ERRORS, LIST, lambda: found, _hook_id)
            jira._session.put(f"{site}{PATH}/{hook_id}", json=body)
    return RegisteredHook(hook_id, EVENTS, found is None, request.secret)


def register(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=False)


def rotate(settings: Settings, request: HookRequest) -> RegisteredHook:
    return _ensure(settings, request, must_exist=True)


def _scope_of(options: Mapping[str, OptionValue]) -> str | None:
    project = options.get("project")
    return str(project) if project else None


SETUP: Final = ProviderSetup(
    webhook=WebhookSetup(
        register=register,
        rotate=rotate,
        secret_setting="jira_webhook_secret",
        scope_help=SCOPE_HELP,
        help="Register the Jira admin webhook on RESOLVER_JIRA_URL (standard input: "
        "email:api_token of a Jira admin).",
        options=(CliOption("project", ("--project",), "Only this project's issues (its key)."),),
        scope_of=_scope_of,
    )
)
