"""Slack's app management on the Slack stand-in: `apps.manifest.create` with an app
configuration token, `tooling.tokens.rotate`, and the OAuth 2.0 install (`/oauth/v2/authorize`,
approved at once by whoever is signed in, then `oauth.v2.access`, a code used once).

    api = SlackAppsAPI()
    token, refresh = api.add_config_token()            # what an admin generates on api.slack.com
    api.expire(token)                                  # 12 hours later
    api.apps                                           # the apps created, with their manifests

A configuration token is `xoxe.xoxp-…` and its refresh token `xoxe-…`; a refresh token works once.
The install gives a bot token (`xoxb-…`) the rest of the stand-in accepts.
https://api.slack.com/methods/apps.manifest.create, https://api.slack.com/methods/tooling.tokens.rotate,
https://api.slack.com/authentication/oauth-v2, https://api.slack.com/methods/oauth.v2.access
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from integrations.slack.standin.api import SlackAPI
from integrations.slack.standin.state import TEAM_ID, Identity, error, ok
from integrations.standin.server import (
    Reply,
    basic_credentials,
    html_page,
    redirect,
    web_params,
    with_query,
)

KNOWN_SCOPES = frozenset(
    {
        "app_mentions:read",
        "channels:history",
        "groups:history",
        "im:history",
        "chat:write",
        "reactions:write",
        "reactions:read",
        "users:read",
        "commands",
    }
)


@dataclass
class App:
    app_id: str
    manifest: dict[str, Any]
    client_id: str
    client_secret: str
    signing_secret: str
    verification_token: str
    codes: dict[str, str] = field(default_factory=dict)  # code -> redirect_uri
    installs: list[str] = field(default_factory=list)  # bot tokens issued

    @property
    def redirect_urls(self) -> list[str]:
        return list(self.manifest.get("oauth_config", {}).get("redirect_urls") or [])

    @property
    def bot_scopes(self) -> list[str]:
        return list(self.manifest.get("oauth_config", {}).get("scopes", {}).get("bot") or [])


Handler = Callable[["SlackAppsAPI", dict[str, Any], dict[str, str]], tuple[int, dict[str, Any]]]


class SlackAppsAPI(SlackAPI):
    """The Slack stand-in with app configuration tokens, apps and their install."""

    def __init__(self) -> None:
        self.config_tokens: dict[str, bool] = {}  # token -> still valid (not expired)
        self.refresh_tokens: set[str] = set()
        self.apps: dict[str, App] = {}
        super().__init__()

    def add_config_token(self) -> tuple[str, str]:
        token = "xoxe.xoxp-1-" + secrets.token_hex(24)
        refresh = "xoxe-1-" + secrets.token_hex(24)
        self.config_tokens[token] = True
        self.refresh_tokens.add(refresh)
        return token, refresh

    def expire(self, token: str) -> None:
        self.config_tokens[token] = False

    @property
    def web_url(self) -> str:
        """Slack's web address (`settings.slack_web_url`), where the install is approved."""
        return self.origin

    def handle(
        self, http_method: str, raw_path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, Any] | str, dict[str, str]] | None:
        if raw_path.split("?")[0] == "/oauth/v2/authorize" and http_method == "GET":
            with self.lock:
                return authorize(self, web_params(raw_path, headers, raw))
        return super().handle(http_method, raw_path, headers, raw)

    def _dispatch(
        self, method: str, headers: dict[str, str], content_type: str, params: dict[str, Any]
    ) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        handler = APP_METHODS.get(method)
        if handler is None:
            return super()._dispatch(method, headers, content_type, params)
        return (*handler(self, params, headers), {})


def _bearer(headers: dict[str, str], params: dict[str, Any]) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    return value if scheme == "Bearer" and value else params.get("token")


def _manifest_errors(manifest: Any) -> list[dict[str, str]]:
    if not isinstance(manifest, dict):
        return [{"message": "must be a JSON object", "pointer": "/"}]
    found = []
    if not (manifest.get("display_information") or {}).get("name"):
        found.append({"message": "is required", "pointer": "/display_information/name"})
    unknown = set((manifest.get("oauth_config") or {}).get("scopes", {}).get("bot") or []) - (
        KNOWN_SCOPES
    )
    if unknown:
        found.append({"message": f"unknown scopes {sorted(unknown)}", "pointer": "/oauth_config"})
    settings = manifest.get("settings") or {}
    events = settings.get("event_subscriptions")
    if events and not events.get("request_url") and not settings.get("socket_mode_enabled"):
        message = "Event Subscription requires either Request URL or Socket Mode Enabled"
        found.append({"message": message, "pointer": "/settings/event_subscriptions"})
    return found


def manifest_create(
    api: SlackAppsAPI, params: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    token = _bearer(headers, params)
    if not token:
        return error("not_authed")
    if token not in api.config_tokens:
        return error("invalid_auth")
    if not api.config_tokens[token]:
        return error("token_expired")
    try:
        manifest = json.loads(params.get("manifest") or "")
    except ValueError:
        manifest = None
    problems = _manifest_errors(manifest)
    if problems:
        return 200, {"ok": False, "error": "invalid_manifest", "errors": problems}
    app = App(
        app_id="A0" + secrets.token_hex(5).upper(),
        manifest=manifest,
        client_id=f"{secrets.randbelow(10**12)}.{secrets.randbelow(10**12)}",
        client_secret=secrets.token_hex(16),
        signing_secret=secrets.token_hex(16),
        verification_token=secrets.token_urlsafe(18),
    )
    api.apps[app.client_id] = app
    credentials = {
        "client_id": app.client_id,
        "client_secret": app.client_secret,
        "signing_secret": app.signing_secret,
        "verification_token": app.verification_token,
    }
    url = with_query(f"{api.web_url}/oauth/v2/authorize", {"client_id": app.client_id})
    return ok(app_id=app.app_id, credentials=credentials, oauth_authorize_url=url, team_id=TEAM_ID)


def tokens_rotate(
    api: SlackAppsAPI, params: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    refresh = params.get("refresh_token")
    if refresh not in api.refresh_tokens:
        return error("invalid_refresh_token")
    api.refresh_tokens.discard(refresh)
    token, new_refresh = api.add_config_token()
    return ok(token=token, refresh_token=new_refresh, team_id=TEAM_ID, user_id="U0ADMIN")


def authorize(api: SlackAppsAPI, params: dict[str, str]) -> Reply:
    """The admin approves the install; Slack sends them back with a code and the state."""
    app = api.apps.get(params.get("client_id", ""))
    if app is None:
        return html_page(400, "Slack", "Invalid client_id parameter")
    redirect_uri = params.get("redirect_uri") or (app.redirect_urls or [""])[0]
    if redirect_uri not in app.redirect_urls:
        return html_page(400, "Slack", "redirect_uri did not match any configured URIs")
    if not set(params.get("scope", "").split(",")) <= set(app.bot_scopes):
        return html_page(400, "Slack", "Invalid permissions requested")
    code = secrets.token_hex(20)
    app.codes[code] = redirect_uri
    state = {"state": params["state"]} if "state" in params else {}
    return redirect(with_query(redirect_uri, {"code": code} | state))


def oauth_access(
    api: SlackAppsAPI, params: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    client_id, secret = basic_credentials(headers) or (
        str(params.get("client_id") or ""),
        str(params.get("client_secret") or ""),
    )
    app = api.apps.get(client_id)
    if app is None:
        return error("invalid_client_id")
    if not secrets.compare_digest(secret, app.client_secret):
        return error("bad_client_secret")
    redirect_uri = app.codes.pop(str(params.get("code") or ""), None)
    if redirect_uri is None:
        return error("invalid_code")
    if params.get("redirect_uri") and params["redirect_uri"] != redirect_uri:
        return error("bad_redirect_uri")
    bot = "xoxb-" + secrets.token_hex(20)
    api.tokens[bot] = Identity("U0BOT", "resolver", bot_id="B0BOT")
    app.installs.append(bot)
    return ok(
        access_token=bot,
        token_type="bot",
        scope=",".join(app.bot_scopes),
        bot_user_id="U0BOT",
        app_id=app.app_id,
        team={"id": TEAM_ID, "name": "Acme"},
        enterprise=None,
        is_enterprise_install=False,
        authed_user={"id": "U0ADMIN"},
    )


APP_METHODS: dict[str, Handler] = {
    "apps.manifest.create": manifest_create,
    "tooling.tokens.rotate": tokens_rotate,
    "oauth.v2.access": oauth_access,
}
