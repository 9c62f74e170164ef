"""The Slack app from its manifest: create it with an app configuration token, keep its
credentials in the vault, then install it in a workspace and keep the bot token as that
workspace's credential (what `resolver tokens set --provider slack --installation TEAM` stores);
and what `/setup` and `resolver setup slack` show and do with it (`SETUP`).

The install's `state` is signed and expires, rather than kept in a browser session, so an
install URL the CLI prints works in the admin's browser too.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from itsdangerous import BadSignature, URLSafeTimedSerializer

from integrations.slack.app_setup import APP
from integrations.slack.settings import SlackSettings
from resolver.contract.inbound import secret_value
from resolver.contract.setup import (
    ActionInput,
    Answer,
    CliOption,
    CommandInput,
    Flash,
    GoTo,
    KeptToken,
    ProviderSetup,
    SetupCommand,
    SetupError,
    SetupSection,
    SetupStore,
    WebAction,
    pasted_token,
)
from resolver.core.logs import log, register_secret
from resolver.core.settings import Settings

logger = logging.getLogger(__name__)

PROVIDER: Final = "slack"
STATE_SALT: Final = "resolver slack install"
STATE_SECONDS: Final = 3600
STORED: Final = ("slack_signing_secret", "slack_app_id", "slack_client_id", "slack_client_secret")
SIGNING_SECRET_HELP: Final = (
    "Slack rotates an app's signing secret only on its Basic Information page "
    "(Regenerate); paste the new one with `resolver setup slack --rotate`"
)
NO_APP: Final = "there is no Slack app yet: create it first (`resolver setup slack`)"


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


def redirect_uri(settings: Settings) -> str:
    return settings.public_url.rstrip("/") + APP.redirect_path


def create_app(
    store: SetupStore, settings: Settings, config_token: str, refresh_token: str | None = None
) -> CreatedSlackApp:
    """Create the app from its manifest and keep its credentials in the vault."""
    token = pasted_token(config_token, "an app configuration token (it starts with xoxe.xoxp-)")
    refresh = refresh_token.strip() if refresh_token else None
    refresh = pasted_token(refresh, "its refresh token") if refresh else None
    store.check_not_in_environment(STORED)
    created = APP.create(settings, token, refresh, settings.public_url)
    store.save(
        {
            "slack_signing_secret": created.signing_secret,
            "slack_app_id": created.app_id,
            "slack_client_id": created.client_id,
            "slack_client_secret": created.client_secret,
        }
    )
    log(logger, logging.INFO, "setup.slack_app_created", app=created.app_id)
    url = _install_url(settings, created.client_id)
    return CreatedSlackApp(created.app_id, url, created.config_token is not None)


def rotate_signing_secret(store: SetupStore, new_secret: str) -> None:
    """Keep the signing secret the admin regenerated in Slack (the API cannot rotate it)."""
    value = new_secret.strip()
    if len(value) < 16 or not value.isalnum():
        raise SetupError(f"that is not a Slack signing secret. {SIGNING_SECRET_HELP}")
    register_secret(value)
    store.check_not_in_environment(("slack_signing_secret",))
    store.save({"slack_signing_secret": value})
    log(logger, logging.INFO, "setup.slack_signing_secret_rotated")


def _states(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.fernet_keys[0], salt=STATE_SALT)


def install_url(settings: Settings) -> str:
    """Where an admin approves installing the app in their workspace."""
    client_id = SlackSettings.of(settings).client_id
    if not client_id:
        raise SetupError(NO_APP)
    return _install_url(settings, client_id)


def _install_url(settings: Settings, client_id: str) -> str:
    state = _states(settings).dumps({"app": client_id, "n": secrets.token_urlsafe(8)})
    return APP.authorize_url(settings, client_id, redirect_uri(settings), state)


def finish_install(
    store: SetupStore, settings: Settings, code: str, state: str
) -> InstalledSlackApp:
    """Trade Slack's code for the bot token and keep it as the workspace's credential."""
    section = SlackSettings.of(settings)
    client_id, client_secret = section.client_id, secret_value(section.client_secret)
    if not client_id or not client_secret:
        raise SetupError(NO_APP)
    try:
        claim = _states(settings).loads(state, max_age=STATE_SECONDS)
    except BadSignature:
        raise SetupError(
            "this install link is not Resolver's or has expired: start again"
        ) from None
    if claim.get("app") != client_id or not code:
        raise SetupError("this install was for another Slack app: start again")
    installed = APP.install(settings, client_id, client_secret, code, redirect_uri(settings))
    expires = (
        datetime.now(UTC) + timedelta(seconds=installed.expires_in)
        if installed.expires_in
        else None
    )
    store.keep_token(
        KeptToken(
            provider=PROVIDER,
            installation=installed.team_id,
            kind="bot",
            secret=installed.bot_token,
            scope=",".join(installed.scopes) or None,
            expires_at=expires,
            refresh=installed.refresh_token,
        )
    )
    log(logger, logging.INFO, "setup.slack_installed", team=installed.team_id)
    return InstalledSlackApp(installed.team_id, installed.bot_user_id, installed.scopes)


def pending_install(store: SetupStore, settings: Settings, now: float) -> str | None:
    """The install URL of the app created in the last STATE_SECONDS and not installed since,
    or None. Creating again would leave that app at Slack, holding our event URL, while the
    vault forgot it; after the hour a press creates another (the app may have been deleted)."""
    client_id = store.kept("slack_client_id")
    if client_id is None or now - client_id.at.timestamp() > STATE_SECONDS:
        return None
    installed = store.token_kept_at(PROVIDER, "bot")
    if installed is not None and installed >= client_id.at:
        return None
    return _install_url(settings, client_id.value)


def _create(given: ActionInput) -> Answer:
    """Create the Slack app, then go straight to Slack to install it. Pressed again before
    that app is installed (a double click, two tabs), it goes to install the same app: the
    presses hold `create` in turn, so the second reads what the first kept."""
    token, refresh = given.values.get("config_token", ""), given.values.get("refresh_token")
    with given.store.held(f"{PROVIDER}:create") as store:
        pending = pending_install(store, given.settings, given.now)
        if pending is not None:
            log(logger, logging.INFO, "web.setup_slack_pending", by=given.by)
            return GoTo(pending)
        created = create_app(store, given.settings, token, refresh or None)
    log(logger, logging.INFO, "web.setup_slack_created", app=created.app_id, by=given.by)
    return GoTo(created.install_url)


def _install(given: ActionInput) -> Answer:
    """Go to Slack to install the app created before."""
    try:
        return GoTo(install_url(given.settings))
    except SetupError as error:
        return Flash(str(error))


def _installed(given: ActionInput) -> Answer:
    """Slack's redirect after the install: trade the code for the bot token."""
    params = given.values
    if params.get("error"):
        return Flash(f"Slack did not install the app ({params['error'][:60]}).")
    code, state = params.get("code", ""), params.get("state", "")
    done = finish_install(given.store, given.settings, code, state)
    return Flash(f"Installed the Slack app in workspace {done.team_id}; its bot token is stored.")


def _rotate(given: ActionInput) -> Answer:
    rotate_signing_secret(given.store, given.values.get("signing_secret", ""))
    return Flash("Stored the new Slack signing secret.")


def _command(given: CommandInput) -> None:
    """Create the app (or, with --rotate, keep a regenerated signing secret)."""
    say = given.console.say
    if given.options.get("rotate"):
        rotate_signing_secret(given.store, given.console.read_lines("signing secret")[0])
        say("stored the new Slack signing secret in the vault")
        return
    lines = given.console.read_lines("app configuration token")
    refresh = lines[1] if len(lines) > 1 else None
    created = create_app(given.store, given.settings, lines[0], refresh)
    note = " (the configuration token had expired and was rotated)" * created.rotated_config_token
    say(f"created Slack app {created.app_id}{note}; its credentials are in the vault")
    say("install it in your workspace (as a Resolver admin, signed in):")
    say(created.install_url)


SETUP: Final = ProviderSetup(
    section=SetupSection(fields=STORED, required=("slack_signing_secret",), template="setup.html"),
    actions=(
        WebAction("create", "POST", _create),
        WebAction("install", "GET", _install),
        WebAction("installed", "GET", _installed),
        WebAction("rotate", "POST", _rotate),
    ),
    templates=Path(__file__).parent / "templates",
    form_targets=lambda settings: (APP.authorize_url(settings, "", "", ""),),
    command=SetupCommand(
        help="Create the Slack app from its manifest (standard input: an app configuration "
        "token, and on a second line its refresh token), then print the install link.",
        options=(
            CliOption(
                "rotate",
                ("--rotate",),
                "Store a signing secret regenerated on the app's page.",
                False,
                "flag",
            ),
        ),
        run=_command,
    ),
)
