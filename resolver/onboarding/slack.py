"""The Slack app from its manifest: create it with an app configuration token, keep its
credentials in the vault, then install it in a workspace and keep the bot token as that
workspace's credential (what `resolver tokens set --provider slack --installation TEAM` stores).

The install's `state` is signed and expires, rather than kept in a browser session, so an
install URL the CLI prints works in the admin's browser too.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from itsdangerous import BadSignature, URLSafeTimedSerializer

from integrations import registry
from resolver.contract.inbound import secret_value
from resolver.contract.setup import AppSetup, SetupError, pasted_token
from resolver.core.logs import log, register_secret
from resolver.core.settings import Settings, get_settings
from resolver.onboarding.hooks import check_not_in_environment, store
from resolver.store.accounts import ensure_installation
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential

logger = logging.getLogger(__name__)

PROVIDER: Final = "slack"
STATE_SALT: Final = "resolver slack install"
STATE_SECONDS: Final = 3600
STORED: Final = ("slack_signing_secret", "slack_app_id", "slack_client_id", "slack_client_secret")
SIGNING_SECRET_HELP: Final = (
    "Slack rotates an app's signing secret only on its Basic Information page "
    "(Regenerate); paste the new one with `resolver setup slack --rotate`"
)


@dataclass(frozen=True)
class CreatedSlackApp:
    app_id: str
    install_url: str
    rotated_config_token: bool


@dataclass(frozen=True)
class InstalledSlackApp:
    team_id: str
    bot_user_id: str | None
    scopes: tuple[str, ...]


def _app_setup() -> AppSetup:
    provider = registry.get(PROVIDER)
    app = provider.setup().app if provider.setup else None
    if app is None:
        raise SetupError("the installed Slack integration cannot create its app")
    return app


def redirect_uri(settings: Settings) -> str:
    return settings.public_url.rstrip("/") + _app_setup().redirect_path


def create_app(config_token: str, refresh_token: str | None = None) -> CreatedSlackApp:
    """Create the app from its manifest and keep its credentials in the vault."""
    token = pasted_token(config_token, "an app configuration token (it starts with xoxe.xoxp-)")
    refresh = refresh_token.strip() if refresh_token else None
    refresh = pasted_token(refresh, "its refresh token") if refresh else None
    check_not_in_environment(STORED)
    settings = get_settings()
    created = _app_setup().create(settings, token, refresh, settings.public_url)
    store(
        settings,
        {
            "slack_signing_secret": created.signing_secret,
            "slack_app_id": created.app_id,
            "slack_client_id": created.client_id,
            "slack_client_secret": created.client_secret,
        },
    )
    log(logger, logging.INFO, "setup.slack_app_created", app=created.app_id)
    url = _install_url(settings, created.client_id)
    return CreatedSlackApp(created.app_id, url, created.config_token is not None)


def rotate_signing_secret(new_secret: str) -> None:
    """Keep the signing secret the admin regenerated in Slack (the API cannot rotate it)."""
    value = new_secret.strip()
    if len(value) < 16 or not value.isalnum():
        raise SetupError(f"that is not a Slack signing secret. {SIGNING_SECRET_HELP}")
    register_secret(value)
    check_not_in_environment(("slack_signing_secret",))
    store(get_settings(), {"slack_signing_secret": value})
    log(logger, logging.INFO, "setup.slack_signing_secret_rotated")


def _states(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.fernet_keys[0], salt=STATE_SALT)


def install_url(settings: Settings) -> str:
    """Where an admin approves installing the app in their workspace."""
    client_id = settings.value("slack_client_id")
    if not client_id:
        raise SetupError("there is no Slack app yet: create it first (`resolver setup slack`)")
    return _install_url(settings, client_id)


def _install_url(settings: Settings, client_id: str) -> str:
    state = _states(settings).dumps({"app": client_id, "n": secrets.token_urlsafe(8)})
    return _app_setup().authorize_url(settings, client_id, redirect_uri(settings), state)


def finish_install(code: str, state: str) -> InstalledSlackApp:
    """Trade Slack's code for the bot token and keep it as the workspace's credential."""
    settings = get_settings()
    client_id = settings.value("slack_client_id")
    client_secret = secret_value(settings.value("slack_client_secret"))
    if not client_id or not client_secret:
        raise SetupError("there is no Slack app yet: create it first (`resolver setup slack`)")
    try:
        claim = _states(settings).loads(state, max_age=STATE_SECONDS)
    except BadSignature:
        raise SetupError(
            "this install link is not Resolver's or has expired: start again"
        ) from None
    if claim.get("app") != client_id or not code:
        raise SetupError("this install was for another Slack app: start again")
    installed = _app_setup().install(
        settings, client_id, client_secret, code, redirect_uri(settings)
    )
    expires = (
        datetime.now(UTC) + timedelta(seconds=installed.expires_in)
        if installed.expires_in
        else None
    )
    with session_scope() as session:
        owner = ensure_installation(session, PROVIDER, installed.team_id)
        store_credential(
            session,
            Vault(settings.fernet_keys),
            provider=PROVIDER,
            kind="bot",
            secret=installed.bot_token,
            installation_id=owner.id,
            scope=",".join(installed.scopes) or None,
            expires_at=expires,
            refresh=installed.refresh_token,
        )
    log(logger, logging.INFO, "setup.slack_installed", team=installed.team_id)
    return InstalledSlackApp(installed.team_id, installed.bot_user_id, installed.scopes)
