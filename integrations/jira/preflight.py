"""Jira's preflight: for each site with a stored token, the token works (`GET /rest/api/2/myself`)
and an enabled admin webhook to `/webhooks/jira` sends the events `routes.ROUTES` acts on
(`GET /rest/webhooks/1.0/webhook`, which needs a Jira administrator's token).
https://developer.atlassian.com/server/jira/platform/webhooks/
"""

from __future__ import annotations

from typing import Any, Final

import requests

from integrations.jira.client import ERRORS
from integrations.jira.routes import ROUTES
from integrations.jira.settings import JiraSettings
from integrations.toolkit.answers import fields, items, read
from integrations.toolkit.limits import Limits
from integrations.toolkit.sessions import mount_bounded
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.errors import CallbackError
from resolver.contract.inbound import secret_value
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token, token_installations

TIMEOUT_SECONDS: Final = 10.0
TOKEN, HOOK = "jira token", "jira webhook"
# The calls, not checks' names (tests/test_docs reads `NAME = "…"` lines as those).
MYSELF: Final = "/rest/api/2/myself"
HOOKS: Final = "/rest/webhooks/1.0/webhook"


def checks(scope: PreflightScope) -> list[Check]:
    settings = scope.settings
    sites = token_installations("jira")
    if sites:
        return [check for site in sites for check in site_checks(settings, site)]
    if secret_value(JiraSettings.of(settings).webhook_secret) is None:
        return []
    site = JiraSettings.of(settings).url or "SITE_URL"
    fix = (
        "no Jira token is stored, so replies cannot be posted: store `email:api_token` with "
        f'`printf %s "$TOKEN" | resolver tokens set --provider jira --installation {site}`'
    )
    return [Check(TOKEN, "fail", fix)]


def _session(credential: str) -> requests.Session:
    """Basic auth for `email:api_token` (Cloud), else a bearer personal access token (DC);
    each call held to the check's deadline and the answer's cap."""
    session = requests.Session()
    mount_bounded(session, Limits(seconds=TIMEOUT_SECONDS))
    email, colon, token = credential.partition(":")
    if colon and email and token:
        session.auth = (email, token)
    else:
        session.headers["Authorization"] = f"Bearer {credential}"
    session.headers["Accept"] = "application/json"
    return session


def site_checks(settings: Settings, site: str) -> list[Check]:
    credential = stored_token("jira", installation=site, settings=settings)
    if credential is None:
        return [Check(f"{TOKEN} {site}", "fail", "its token has expired")]
    register_secret(credential)
    with _session(credential) as session:
        try:
            me = session.get(site + MYSELF, timeout=TIMEOUT_SECONDS)
            if me.status_code != 200:
                fix = "store a working token" if me.status_code == 401 else "check the site URL"
                return [Check(f"{TOKEN} {site}", "fail", f"Jira answered {me.status_code} to "
                              f"GET {MYSELF}: {fix}")]  # fmt: skip
            hooks = session.get(site + HOOKS, timeout=TIMEOUT_SECONDS)
        except requests.RequestException as error:
            return [
                Check(
                    f"{TOKEN} {site}", "fail", f"{site} cannot be reached: {type(error).__name__}"
                )
            ]
    try:
        who = read(ERRORS, f"GET {MYSELF}", me.json, fields).get("displayName")
    except CallbackError as error:
        return [Check(f"{TOKEN} {site}", "fail", f"{error}: check the site URL")]
    found = Check(f"{TOKEN} {site}", "ok", f"acts as {who}")
    url = f"{settings.public_url.rstrip('/')}/webhooks/jira"
    if hooks.status_code != 200:
        fix = "listing webhooks needs a Jira administrator's token"
        return [found, Check(f"{HOOK} {site}", "fail", f"Jira answered {hooks.status_code}: {fix}")]
    try:
        listed = read(ERRORS, f"GET {HOOKS}", hooks.json, _hooks)
    except CallbackError as error:
        return [found, Check(f"{HOOK} {site}", "fail", str(error))]
    return [found, webhook_check(site, listed, url)]


def _hooks(answer: object) -> list[dict[str, Any]]:
    """The webhooks listed, each one's events a list (or none)."""
    hooks = items(answer)
    if any(not isinstance(hook.get("events") or [], list) for hook in hooks):
        raise TypeError("a webhook's events are no list")
    return hooks


def webhook_check(site: str, hooks: list[dict[str, Any]], url: str) -> Check:
    name = f"{HOOK} {site}"
    hook = next((h for h in hooks if str(h.get("url", "")).split("?")[0] == url), None)
    if hook is None:
        return Check(name, "fail", f"no webhook to {url}: run `resolver setup jira`, or add one "
                     "under System > WebHooks")  # fmt: skip
    missing = [event for event in ROUTES if event not in (hook.get("events") or ())]
    if hook.get("enabled") is False or missing:
        what = "enable it" if hook.get("enabled") is False else f"add {', '.join(missing)}"
        return Check(name, "fail", f"its webhook to {url} needs work: {what}")
    return Check(name, "ok", f"{url}, {', '.join(ROUTES)}")
