"""Creating Resolver's GitHub App from a manifest, and changing its webhook secret.

The browser POSTs the manifest to GitHub's "new App" page (personal or an organisation's);
GitHub sends the person back to `redirect_url` with a code that works once, for an hour, and
`POST /app-manifests/{code}/conversions` trades it for the App's id, key and secrets.
https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest
https://docs.github.com/rest/apps/webhooks#update-a-webhook-configuration-for-an-app
GitHub Enterprise Server serves the same pages and API at its own addresses.
"""

from __future__ import annotations

import re
from typing import Any, Final
from urllib.parse import quote, urlencode, urlsplit

import httpx

from integrations.github.app_manifest import EVENTS, PERMISSIONS
from integrations.github.settings import GitHubSettings
from integrations.toolkit.answers import SHAPE_ERRORS, fields, text
from integrations.toolkit.http import bounded_client
from integrations.toolkit.limits import Limits
from resolver.contract.setup import AppFromManifest, CreatedApp, ManifestUrls, SetupError
from resolver.core.logs import register_secret
from resolver.core.settings import Settings

TIMEOUT: Final = 15.0
NAME_LIMIT: Final = 34  # GitHub refuses App names longer than this
# A GitHub login: letters, digits and single inner hyphens, at most 39 characters.
LOGIN: Final = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}")
FIELDS: Final = (
    "github_app_id",
    "github_app_private_key",
    "github_webhook_secret",
    "github_client_id",
    "github_client_secret",
)
REUSED_CODE: Final = (
    "GitHub did not accept this code: it works once, for an hour. Create the App again from "
    "/setup (or `resolver setup github`)."
)


def check_owner(owner: str) -> str:
    owner = owner.strip()
    if not LOGIN.fullmatch(owner):
        raise SetupError(
            f"{owner[:40]!r} is not a GitHub account or organisation name (letters, digits and "
            "single hyphens, at most 39 characters)"
        )
    return owner


def check_name(name: str) -> str:
    name = " ".join(name.split())
    if not name or len(name) > NAME_LIMIT:
        raise SetupError(f"the App's name must be 1 to {NAME_LIMIT} characters")
    return name


def default_name(settings: Settings) -> str:
    host = urlsplit(settings.public_url).hostname or "local"
    name = f"Resolver ({host})"
    return name if len(name) <= NAME_LIMIT else f"Resolver ({host[: NAME_LIMIT - 12]}…)"


def build_manifest(name: str, urls: ManifestUrls) -> dict[str, Any]:
    """The manifest: exactly the permissions and events the README lists, and our URLs."""
    return {
        "name": name,
        "url": urls.home,
        "hook_attributes": {"url": urls.webhook, "active": True},
        "redirect_url": urls.redirect,
        "callback_urls": [urls.sign_in_callback],
        "public": False,
        "request_oauth_on_install": False,
        "default_permissions": dict(PERMISSIONS),
        "default_events": list(EVENTS),
    }


def new_app_url(settings: Settings, organisation: str | None, state: str) -> str:
    web = GitHubSettings.of(settings).web_url.rstrip("/")
    where = f"/organizations/{quote(organisation)}" if organisation else ""
    return f"{web}{where}/settings/apps/new?{urlencode({'state': state})}"


def convert(settings: Settings, code: str) -> CreatedApp:
    """`POST /app-manifests/{code}/conversions` (no authentication): the App GitHub created."""
    if not code or len(code) > 200:
        raise SetupError("GitHub sent no usable code back; create the App again")
    path = f"/app-manifests/{quote(code, safe='')}/conversions"
    response = _call(settings, "POST", path, None)
    if response.status_code in (404, 422):
        raise SetupError(REUSED_CODE)
    _raise_for(response, "creating the App")
    return _created(response)


def _created(response: httpx.Response) -> CreatedApp:
    try:
        data = fields(response.json())
        values = {
            "github_app_id": str(_app_id(data["id"])),
            "github_app_private_key": text(data["pem"]),
            "github_webhook_secret": text(data["webhook_secret"]),
            "github_client_id": text(data["client_id"]),
            "github_client_secret": text(data["client_secret"]),
        }
        slug, html_url = text(data["slug"]), text(data["html_url"])
        owner = str(fields(data.get("owner") or {}).get("login") or "")
    except SHAPE_ERRORS:  # read as toolkit/answers reads every answer: none stored as "None"
        raise SetupError("GitHub's answer lacked the App's id, key or secrets") from None
    for name in ("github_app_private_key", "github_webhook_secret", "github_client_secret"):
        register_secret(values[name])
    return CreatedApp(slug, html_url, owner, f"{html_url}/installations/new", values)


def _app_id(value: object) -> int:
    """An App's id: a positive number."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise TypeError(f"{type(value).__name__} where an App id was due")
    return value


def set_webhook_secret(settings: Settings, secret: str) -> None:
    """`PATCH /app/hook/config` as the App (its JWT): deliveries are signed with `secret`."""
    # The job side (githubkit) loads on first use: the web process otherwise never needs it.
    from integrations.github.auth import GitHubAuthError, app_jwt

    try:
        bearer = app_jwt(settings)
    except GitHubAuthError as error:
        raise SetupError(str(error)) from None
    register_secret(secret)
    response = _call(settings, "PATCH", "/app/hook/config", {"secret": secret}, bearer)
    _raise_for(response, "changing the App's webhook secret")


def _call(
    settings: Settings, method: str, path: str, body: Any, bearer: str | None = None
) -> httpx.Response:
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    if bearer is not None:
        headers["Authorization"] = f"Bearer {bearer}"
    url = GitHubSettings.of(settings).api_url.rstrip("/") + path
    try:
        with bounded_client(Limits(seconds=TIMEOUT)) as http:
            return http.request(method, url, json=body, headers=headers)
    except httpx.HTTPError as error:
        raise SetupError(f"GitHub could not be reached: {type(error).__name__}") from None


def _raise_for(response: httpx.Response, doing: str) -> None:
    if response.status_code < 400:
        return
    try:
        message = str(response.json().get("message") or "")[:200]
    except (ValueError, AttributeError):
        message = ""
    detail = f": {message}" if message else ""
    raise SetupError(f"GitHub answered {response.status_code} while {doing}{detail}")


APP_FROM_MANIFEST: Final = AppFromManifest(
    fields=FIELDS,
    webhook_secret_field="github_webhook_secret",
    check_owner=check_owner,
    check_name=check_name,
    default_name=default_name,
    manifest=build_manifest,
    new_app_url=new_app_url,
    convert=convert,
    set_webhook_secret=set_webhook_secret,
)
