"""GitHub's App manifest flow on the stand-in: the "new App" page a browser POSTs a manifest to,
the one-time code it redirects back with, and the App's own endpoints.

    POST {web_url}/settings/apps/new?state=…                      (form field `manifest`)
    POST {web_url}/organizations/{org}/settings/apps/new?state=…  → a page with the name and
         a "Create GitHub App" button; pressing it creates the App (id, a real RSA key, webhook
         secret, client id and secret) and 302s to the manifest's redirect_url?code=…&state=…
    POST /app-manifests/{code}/conversions    201 with the App and its secrets; a code works
         once, for an hour (404 after)
    GET /app, GET and PATCH /app/hook/config  as the App (its JWT)

A created App's JWTs are accepted like the stand-in's own App's, so its key mints
installation tokens. https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from integrations.github.standin import app_hooks
from integrations.github.standin.state import Answer, Request, error_body, now
from integrations.standin.server import Reply, Text, html_page, redirect, web_params, with_query

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

CODE_LIFETIME: Final = 3600.0
NEW_APP: Final = re.compile(r"^(?:/organizations/([^/]+))?/settings/apps/new$")


@dataclass
class CreatedApp:
    """An App made from a manifest, as GitHub keeps it."""

    id: int
    slug: str
    name: str
    owner: str
    manifest: dict[str, Any]
    private_pem: str
    public_pem: str
    webhook_secret: str
    client_id: str
    client_secret: str
    created_at: str = field(default_factory=now)


@dataclass
class Manifests:
    """The Apps created here (by id), the codes not yet traded (code -> app id, issued at), the
    manifests browsers POSTed, in order, and a clock that ages the codes."""

    apps: dict[str, CreatedApp] = field(default_factory=dict)
    codes: dict[str, tuple[str, float]] = field(default_factory=dict)
    posted: list[dict[str, Any]] = field(default_factory=list)
    clock: Any = time.time


def new_app_page(
    api: GitHubAPI, method: str, raw_path: str, headers: dict[str, str], raw: bytes
) -> Reply | None:
    """The "Register new GitHub App" page, or None when the path is another one."""
    path = urlsplit(raw_path).path
    if path == "/favicon.ico":  # what a browser on that page asks for too; not the REST API
        return html_page(404, "Page not found", "No icon here.")
    found = NEW_APP.match(path)
    if found is None:
        return None
    if method != "POST":
        return html_page(200, "Register new GitHub App", "Fill in the form to register an App.")
    params = web_params(raw_path, headers, raw)
    with api.lock:
        return _create(api, params, found.group(1)) if "create" in params else _form(api, params)


def _manifest(params: dict[str, str]) -> dict[str, Any] | None:
    try:
        manifest = json.loads(params.get("manifest", ""))
    except ValueError:
        return None
    hook = manifest.get("hook_attributes") if isinstance(manifest, dict) else None
    needed = isinstance(hook, dict) and hook.get("url") and manifest.get("url")
    return manifest if needed else None


def _form(api: GitHubAPI, params: dict[str, str]) -> Reply:
    manifest = _manifest(params)
    if manifest is None:
        return html_page(422, "Invalid GitHub App configuration", "The manifest is not valid.")
    api.manifests.posted.append(manifest)
    name = escape(str(manifest.get("name", "")))
    hidden = "".join(
        f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">'
        for k, v in (("manifest", params["manifest"]), ("state", params.get("state", "")))
    )
    body = (
        "<!DOCTYPE html><html><head><title>Create GitHub App</title></head><body>"
        f"<h1>Create GitHub App</h1><form method=post>{hidden}"
        f'<label>GitHub App name <input name="name" value="{name}"></label>'
        '<input type="hidden" name="create" value="1">'
        "<button type=submit>Create GitHub App</button></form></body></html>"
    )
    return 200, Text(body, "text/html; charset=utf-8"), {}


def _create(api: GitHubAPI, params: dict[str, str], organisation: str | None) -> Reply:
    manifest = _manifest(params)
    person = api.oauth.signed_in
    if manifest is None or person is None:
        return html_page(422, "Cannot create the App", "Sign in, and send a valid manifest.")
    name = params.get("name") or str(manifest.get("name") or "")
    app = _new_app(api, name, organisation or person, manifest)
    api.manifests.apps[str(app.id)] = app
    api.add_oauth_app(app.client_id, app.client_secret)
    code = secrets.token_hex(10)
    api.manifests.codes[code] = (str(app.id), api.manifests.clock())
    state = {"state": params["state"]} if params.get("state") else {}
    target = str(manifest.get("redirect_url") or "")
    if not target:
        return html_page(200, app.name, "The App was created.")
    return redirect(with_query(target, {"code": code} | state))


def _new_app(api: GitHubAPI, name: str, owner: str, manifest: dict[str, Any]) -> CreatedApp:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "app"
    return CreatedApp(
        id=api.new_id(),
        slug=slug,
        name=name,
        owner=owner,
        manifest=manifest,
        private_pem=private,
        public_pem=public,
        webhook_secret=secrets.token_hex(20),
        client_id=f"Iv23li{secrets.token_hex(7)}",
        client_secret=secrets.token_hex(20),
    )


def app_json(api: GitHubAPI, app: CreatedApp) -> dict[str, Any]:
    """GitHub's App object, with the permissions and events it was created with."""
    return {
        "id": app.id,
        "slug": app.slug,
        "node_id": f"A_{app.id}",
        "client_id": app.client_id,
        "owner": api.user_json(app.owner),
        "name": app.name,
        "description": app.manifest.get("description"),
        "external_url": app.manifest.get("url"),
        "html_url": f"{api.web_url}/apps/{app.slug}",
        "created_at": app.created_at,
        "updated_at": app.created_at,
        "permissions": dict(app.manifest.get("default_permissions") or {}),
        "events": list(app.manifest.get("default_events") or []),
    }


def convert(api: GitHubAPI, request: Request) -> Answer:
    """`POST /app-manifests/{code}/conversions`: the App and its secrets, once per code."""
    found = api.manifests.codes.pop(request.params["code"], None)
    if found is None or api.manifests.clock() - found[1] > CODE_LIFETIME:
        return 404, error_body(404, "Not Found")
    app = api.manifests.apps[found[0]]
    secrets_ = {
        "client_secret": app.client_secret,
        "webhook_secret": app.webhook_secret,
        "pem": app.private_pem,
    }
    return 201, app_json(api, app) | secrets_


def get_app(api: GitHubAPI, request: Request) -> Answer:
    """`GET /app`: the App whose JWT called."""
    app = api.manifests.apps.get(request.login.removeprefix("app/"))
    if app is None:  # the stand-in's own App
        return app_hooks.get_app(api, request)
    return 200, app_json(api, app)


def _hook_config(app: CreatedApp) -> dict[str, Any]:
    hook = app.manifest.get("hook_attributes") or {}
    # GitHub never returns the secret itself.
    return {"content_type": "json", "insecure_ssl": "0", "url": hook.get("url"), "secret": "*" * 8}


def get_hook_config(api: GitHubAPI, request: Request) -> Answer:
    app = api.manifests.apps.get(request.login.removeprefix("app/"))
    if app is None:  # the stand-in's own App
        return app_hooks.get_hook_config(api, request)
    return 200, _hook_config(app)


def update_hook_config(api: GitHubAPI, request: Request) -> Answer:
    """`PATCH /app/hook/config`: `secret`, `url`, `content_type`, `insecure_ssl`."""
    app = api.manifests.apps.get(request.login.removeprefix("app/"))
    if app is None:
        return 404, error_body(404, "Not Found")
    body = request.body if isinstance(request.body, dict) else {}
    if isinstance(body.get("secret"), str):
        app.webhook_secret = body["secret"]
    if isinstance(body.get("url"), str):
        app.manifest.setdefault("hook_attributes", {})["url"] = body["url"]
    return 200, _hook_config(app)


def public_key_of(api: GitHubAPI, app_id: str) -> str | None:
    """The public key that verifies `app_id`'s JWTs, for the stand-in's own App and created ones."""
    if app_id == api.app_id:
        return api.public_key
    app = api.manifests.apps.get(app_id)
    return app.public_pem if app else None


MANIFEST_ROUTES: Final = {
    "POST /app-manifests/{code}/conversions": convert,
    "GET /app": get_app,
    "GET /app/hook/config": get_hook_config,
    "PATCH /app/hook/config": update_hook_config,
}
