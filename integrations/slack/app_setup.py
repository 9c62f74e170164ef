"""Creating Resolver's Slack app from its manifest (`apps.manifest.create`, with an app
configuration token) and installing it in a workspace (OAuth 2.0, `oauth.v2.access`), through
slack_sdk.

A configuration token lasts 12 hours and comes with a refresh token; when Slack answers
`token_expired` and the refresh token was given, `tooling.tokens.rotate` makes a new pair and
the call is made once more. https://api.slack.com/reference/manifests,
https://api.slack.com/methods/apps.manifest.create, https://api.slack.com/methods/oauth.v2.access

The signing secret cannot be rotated through the API (`apps.manifest.update` keeps it): Slack
regenerates it on the app's Basic Information page only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final
from urllib.parse import urlencode

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from integrations.slack.app_manifest import BOT_EVENTS, BOT_SCOPES
from integrations.slack.client import NETWORK_ERRORS, UnredirectedWebClient
from integrations.slack.settings import SlackSettings
from resolver.contract.setup import AppSetup, ChatApp, Installation, SetupError
from resolver.core.logs import register_secret
from resolver.core.settings import Settings

TIMEOUT_SECONDS: Final = 30
INSTALLED_PATH: Final = "/setup/slack/installed"
EVENTS_PATH: Final = "/webhooks/slack"
CONFIG_TOKEN_HELP: Final = (
    "generate an app configuration token under 'Your App Configuration Tokens' at "
    "https://api.slack.com/apps"
)
ERRORS: Final = {
    "not_authed": f"no app configuration token was given: {CONFIG_TOKEN_HELP}",
    "invalid_auth": f"Slack refused the app configuration token: {CONFIG_TOKEN_HELP}",
    "token_expired": "the app configuration token has expired (they last 12 hours): "
    f"give its refresh token too, or {CONFIG_TOKEN_HELP}",
    "invalid_refresh_token": f"Slack refused the refresh token: {CONFIG_TOKEN_HELP}",
    "not_allowed_token_type": f"that is not an app configuration token: {CONFIG_TOKEN_HELP}",
    "invalid_code": "the install's code was used already or has expired: install again",
    "bad_redirect_uri": f"the redirect URL is not the app's: it must be {INSTALLED_PATH}",
    "invalid_client_id": "Slack does not know the app's client id: create the app again",
    "bad_client_secret": "Slack refused the app's client secret: create the app again",
}


def build_manifest(public_url: str, bot_name: str) -> dict[str, Any]:
    """Resolver's app: a bot user with exactly BOT_SCOPES, the Events API at the public URL
    with exactly BOT_EVENTS, and the install coming back to `/setup/slack/installed`."""
    base = public_url.rstrip("/")
    return {
        "display_information": {
            "name": bot_name[:35],
            "description": "Mention it in a thread to get a pull request or an answer.",
        },
        "features": {"bot_user": {"display_name": bot_name[:80], "always_online": True}},
        "oauth_config": {
            "redirect_urls": [base + INSTALLED_PATH],
            "scopes": {"bot": list(BOT_SCOPES)},
        },
        "settings": {
            "event_subscriptions": {
                "request_url": base + EVENTS_PATH,
                "bot_events": list(BOT_EVENTS),
            },
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }


# slack_sdk logs whole answers at DEBUG, and these hold the app's secrets before the redactor
# knows them: its lines for these calls stop at WARNING.
SDK_LOGGER: Final = logging.getLogger(f"{__name__}.sdk")
SDK_LOGGER.setLevel(logging.WARNING)


def _web(settings: Settings, token: str | None = None) -> WebClient:
    return UnredirectedWebClient(
        token=token,
        base_url=SlackSettings.of(settings).api_url.rstrip("/") + "/",
        timeout=TIMEOUT_SECONDS,
        logger=SDK_LOGGER,
        retry_handlers=[],
    )


@contextmanager
def _explained(method: str) -> Iterator[None]:
    """slack_sdk's errors as one sentence on what to fix (never the token)."""
    try:
        yield
    except SlackApiError as error:
        code = str(error.response.get("error") or "unknown_error")
        raise SetupError(ERRORS.get(code) or _invalid(method, code, error.response)) from None
    except NETWORK_ERRORS as error:
        reason = f"Slack could not be reached for {method}"
        raise SetupError(f"{reason}: {type(error).__name__}") from None


def _invalid(method: str, code: str, response: Any) -> str:
    details = [
        f"{item.get('pointer', '?')}: {item.get('message', '')}"
        for item in (response.get("errors") or [])
        if isinstance(item, dict)
    ]
    return f"Slack answered {code} to {method}" + (f" ({'; '.join(details)})" if details else "")


def create_app(
    settings: Settings, config_token: str, refresh_token: str | None, public_url: str
) -> ChatApp:
    """`apps.manifest.create`; on `token_expired` with a refresh token, rotate and retry once."""
    register_secret(config_token)
    manifest = build_manifest(public_url, settings.bot_name)
    with _explained("apps.manifest.create"):
        data = _try_create(_web(settings, config_token), manifest)
    rotated: tuple[str, str] | None = None
    if data is None:
        if not refresh_token:
            raise SetupError(ERRORS["token_expired"])
        rotated = _rotate_config_token(settings, refresh_token)
        with _explained("apps.manifest.create"):
            data = _web(settings, rotated[0]).apps_manifest_create(manifest=manifest).data
    return _created(data, rotated)


def _try_create(client: WebClient, manifest: dict[str, Any]) -> Any:
    """The answer's data, or None when the configuration token has expired."""
    try:
        return client.apps_manifest_create(manifest=manifest).data
    except SlackApiError as error:
        if error.response.get("error") == "token_expired":
            return None
        raise


def _rotate_config_token(settings: Settings, refresh_token: str) -> tuple[str, str]:
    register_secret(refresh_token)
    with _explained("tooling.tokens.rotate"):
        answer = _web(settings).tooling_tokens_rotate(refresh_token=refresh_token)
    token, refresh = str(answer["token"]), str(answer["refresh_token"])
    register_secret(token)
    register_secret(refresh)
    return token, refresh


def _created(data: Any, rotated: tuple[str, str] | None) -> ChatApp:
    data = data if isinstance(data, dict) else {}
    credentials, app_id = data.get("credentials") or {}, data.get("app_id")
    needed = ("client_id", "client_secret", "signing_secret")
    if not app_id or not all(credentials.get(k) for k in needed):
        raise SetupError("Slack's answer to apps.manifest.create had no app id or credentials")
    register_secret(str(credentials["client_secret"]))
    register_secret(str(credentials["signing_secret"]))
    return ChatApp(
        app_id=str(app_id),
        client_id=str(credentials["client_id"]),
        client_secret=str(credentials["client_secret"]),
        signing_secret=str(credentials["signing_secret"]),
        config_token=rotated[0] if rotated else None,
        refresh_token=rotated[1] if rotated else None,
    )


def authorize_url(settings: Settings, client_id: str, redirect_uri: str, state: str) -> str:
    """Where the admin approves installing the app in their workspace."""
    query = {
        "client_id": client_id,
        "scope": ",".join(BOT_SCOPES),
        "redirect_uri": redirect_uri,
        "state": state,
    }
    return f"{SlackSettings.of(settings).web_url.rstrip('/')}/oauth/v2/authorize?{urlencode(query)}"


def install(
    settings: Settings, client_id: str, client_secret: str, code: str, redirect_uri: str
) -> Installation:
    """`oauth.v2.access`: the workspace's bot token for the code Slack sent back."""
    register_secret(client_secret)
    with _explained("oauth.v2.access"):
        answer = _web(settings).oauth_v2_access(
            client_id=client_id, client_secret=client_secret, code=code, redirect_uri=redirect_uri
        )
    data = answer.data if isinstance(answer.data, dict) else {}
    token, team = data.get("access_token"), (data.get("team") or {}).get("id")
    if data.get("token_type") != "bot" or not token or not team:
        raise SetupError("Slack's answer to oauth.v2.access had no bot token or workspace")
    register_secret(str(token))
    if data.get("refresh_token"):
        register_secret(str(data["refresh_token"]))
    return Installation(
        team_id=str(team),
        bot_token=str(token),
        bot_user_id=data.get("bot_user_id"),
        scopes=tuple(s for s in str(data.get("scope") or "").split(",") if s),
        refresh_token=data.get("refresh_token"),
        expires_in=data.get("expires_in"),
    )


APP: Final = AppSetup(
    create=create_app,
    authorize_url=authorize_url,
    install=install,
    redirect_path=INSTALLED_PATH,
)
