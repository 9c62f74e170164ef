"""The GitHub App's preflight: its JWT works (`GET /app`), it has the permissions and events of
`app_manifest`, its webhook points here (`GET /app/hook/config`), and a redelivery of its latest
delivery comes back accepted (`POST /app/hook/deliveries/{id}/attempts`).

A redelivery keeps the delivery's GUID, which the ingress deduplicates on, so redelivering a
mention does not start a second job. https://docs.github.com/rest/apps/apps#get-the-authenticated-app
https://docs.github.com/rest/apps/webhooks
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

from githubkit import GitHub

from integrations.github.api import github_session, translate_errors
from integrations.github.app_manifest import EVENTS, PERMISSIONS
from integrations.github.auth import GitHubAuthError, app_configured, app_jwt
from integrations.github.settings import GitHubSettings
from integrations.toolkit.answers import fields, items
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.errors import CallbackError

TIMEOUT_SECONDS: Final = 10.0
REDELIVERY_WAIT_SECONDS: Final = 10.0
POLL_SECONDS: Final = 0.5
LEVELS: Final = {"read": 1, "write": 2, "admin": 3}
APP, PERMISSIONS_CHECK, EVENTS_CHECK = "github app", "github app permissions", "github app events"
HOOK, DELIVERY = "github webhook", "github test delivery"
T = TypeVar("T")


class _Api:
    """The App-level calls, each with a fresh JWT and a short timeout."""

    def __init__(self, scope: PreflightScope) -> None:
        self.settings = scope.settings
        # githubkit's namespaces hold their client weakly: keep it.
        self.github: GitHub[Any] = github_session(self.settings, timeout=TIMEOUT_SECONDS)
        self.apps = self.github.rest.apps

    def call(
        self,
        action: str,
        method: Callable[..., Any],
        shape: Callable[[Any], T],
        *args: Any,
        **kwargs: Any,
    ) -> T:
        """The answer to `action` as `shape` reads it: one of the wrong shape is GitHub's
        unusable answer (a CallbackError), as a refusal is."""
        bearer = {"Authorization": f"Bearer {app_jwt(self.settings)}"}
        with translate_errors(action):
            return shape(method(*args, headers=bearer, **kwargs).json())


def _app(answer: object) -> dict[str, Any]:
    """The App, its owner and permissions objects and its events a list, where it has them."""
    app = fields(answer)
    fields(app.get("owner") or {})
    fields(app.get("permissions") or {})
    if not isinstance(app.get("events") or [], list):
        raise TypeError("events that are no list")
    return app


def _deliveries(answer: object) -> list[dict[str, Any]]:
    """The deliveries listed, each one's id and status code a number."""
    return [
        delivery | {"id": int(delivery["id"]), "status_code": int(delivery.get("status_code") or 0)}
        for delivery in items(answer)
    ]


def _any(answer: object) -> object:
    return answer


def checks(scope: PreflightScope) -> list[Check]:
    """The App's checks, in order; the later ones only once its JWT works."""
    if not app_configured(scope.settings):
        return []
    api = _Api(scope)
    try:
        app = api.call("GET /app", api.apps.get_authenticated, _app)
    except GitHubAuthError as error:
        return [Check(APP, "fail", str(error))]
    except CallbackError as error:
        return [_app_failure(error)]
    page = settings_page(GitHubSettings.of(scope.settings).web_url, app)
    found = [Check(APP, "ok", f"{app.get('slug')} (id {app.get('id')}), the JWT works")]
    found += [permissions_check(app, page), events_check(app, page)]
    return [*found, *_webhook_checks(api, page)]


def _app_failure(error: CallbackError) -> Check:
    if error.status == 401:
        return Check(APP, "fail", f"the App id or private key is wrong: {error}")
    return Check(APP, "fail", f"{error}; check RESOLVER_GITHUB_API_URL and the network")


def settings_page(web_url: str, app: dict[str, Any]) -> str:
    """The App's settings page on GitHub: under its organisation, or under the user's settings."""
    owner, slug = app.get("owner") or {}, app.get("slug")
    if owner.get("type") == "Organization":
        return f"{web_url.rstrip('/')}/organizations/{owner.get('login')}/settings/apps/{slug}"
    return f"{web_url.rstrip('/')}/settings/apps/{slug}"


def permissions_check(app: dict[str, Any], page: str) -> Check:
    """Each permission of PERMISSIONS granted at its level or above."""
    granted = app.get("permissions") or {}
    missing = [
        f"{name.replace('_', ' ').capitalize()}: {level}"
        for name, level in PERMISSIONS.items()
        if LEVELS.get(str(granted.get(name)), 0) < LEVELS[level]
    ]
    if not missing:
        return Check(PERMISSIONS_CHECK, "ok", ", ".join(f"{k}: {v}" for k, v in granted.items()))
    return Check(
        PERMISSIONS_CHECK,
        "fail",
        f"grant {', '.join(missing)} in the App settings at {page}/permissions, then accept the "
        "new permissions on each installation",
    )


def events_check(app: dict[str, Any], page: str) -> Check:
    """Each event of EVENTS subscribed to."""
    subscribed = set(app.get("events") or ())
    missing = [event for event in EVENTS if event not in subscribed]
    if not missing:
        return Check(EVENTS_CHECK, "ok", ", ".join(EVENTS))
    return Check(
        EVENTS_CHECK,
        "fail",
        f"subscribe to {', '.join(missing)} under 'Subscribe to events' at {page}/permissions",
    )


def hook_url(public_url: str) -> str:
    return f"{public_url.rstrip('/')}/webhooks/github"


def _webhook_checks(api: _Api, page: str) -> list[Check]:
    try:
        config = api.call("GET /app/hook/config", api.apps.get_webhook_config_for_app, fields)
    except CallbackError as error:
        return [Check(HOOK, "fail", str(error))]
    problems = config_problems(config, hook_url(api.settings.public_url))
    if problems:
        return [Check(HOOK, "fail", f"{'; '.join(problems)} in the App settings at {page}")]
    return [Check(HOOK, "ok", f"{config.get('url')}, JSON, signed"), _delivery_check(api, page)]


def config_problems(config: dict[str, Any], expected_url: str) -> list[str]:
    """What differs in the App's webhook from what the ingress needs."""
    problems = []
    if not config.get("url"):
        problems.append(f"activate the webhook with the URL {expected_url}")
    elif config.get("url") != expected_url:
        problems.append(f"set the webhook URL to {expected_url} (it is {config.get('url')})")
    if config.get("content_type") != "json":
        problems.append("set the webhook's content type to application/json")
    if not config.get("secret"):
        problems.append("set the webhook secret to the value of RESOLVER_GITHUB_WEBHOOK_SECRET")
    return problems


def _delivery_check(api: _Api, page: str) -> Check:
    """Redeliver the latest delivery and read the status our endpoint answered it with."""
    rest = api.apps
    try:
        action = "GET /app/hook/deliveries"
        latest = api.call(action, rest.list_webhook_deliveries, _deliveries, per_page=1)
        if not latest:
            return Check(DELIVERY, "fail", "no delivery yet: install the App on a repository")
        action = "POST /app/hook/deliveries/{delivery_id}/attempts"
        api.call(action, rest.redeliver_webhook_delivery, _any, latest[0]["id"])
        redelivery = _await_redelivery(api, latest[0])
    except CallbackError as error:
        return Check(DELIVERY, "fail", str(error))
    if redelivery is None:
        wait = f"{REDELIVERY_WAIT_SECONDS:.0f} s"
        return Check(DELIVERY, "fail", f"GitHub did not redeliver within {wait}; run it again")
    return delivery_verdict(redelivery, hook_url(api.settings.public_url), page)


def _await_redelivery(api: _Api, original: dict[str, Any]) -> dict[str, Any] | None:
    """The redelivery of `original` once GitHub lists it (GitHub redelivers asynchronously)."""
    deadline = time.monotonic() + REDELIVERY_WAIT_SECONDS
    rest = api.apps
    while True:
        action = "GET /app/hook/deliveries"
        recent = api.call(action, rest.list_webhook_deliveries, _deliveries, per_page=10)
        found = next((d for d in recent if _redelivers(d, original)), None)
        if found is not None or time.monotonic() > deadline:
            return found
        time.sleep(POLL_SECONDS)


def _redelivers(delivery: dict[str, Any], original: dict[str, Any]) -> bool:
    return (
        bool(delivery.get("redelivery"))
        and delivery.get("guid") == original.get("guid")
        and delivery["id"] > original["id"]
    )


def delivery_verdict(redelivery: dict[str, Any], url: str, page: str) -> Check:
    """What our endpoint answered the redelivery with, and what to fix when it refused."""
    status = redelivery["status_code"]
    what = f"a redelivered {redelivery.get('event')} event"
    if 200 <= status < 300:
        return Check(DELIVERY, "ok", f"{what} reached {url} and was accepted (HTTP {status})")
    fixes = {
        401: "the signature was refused: the App's webhook secret differs from "
        f"RESOLVER_GITHUB_WEBHOOK_SECRET; set one value in both (App settings at {page})",
        404: "the GitHub webhook is off here: set RESOLVER_GITHUB_WEBHOOK_SECRET",
        0: f"GitHub could not connect: {url} must be reachable from GitHub",
    }
    fix = fixes.get(status, f"see the delivery under 'Advanced' at {page}")
    return Check(DELIVERY, "fail", f"{what} to {url} got HTTP {status}: {fix}")
