"""The Slack app's preflight: for each workspace with a stored bot token, `auth.test` answers
with it, and the scopes Slack says it was granted (`x-oauth-scopes`) cover the manifest's.
https://docs.slack.dev/reference/methods/auth.test https://api.slack.com/scopes

Slack offers a bot token no way to read the app's event subscriptions or to send a test event;
the app's manifest (`/setup`) sets them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from integrations.slack.app_manifest import BOT_SCOPES
from integrations.slack.client import (
    ERRORS,
    NETWORK_ERRORS,
    UnreadableAnswerError,
    slack_session,
)
from integrations.slack.settings import SlackSettings
from integrations.toolkit import answers
from resolver.contract.checks import Check, PreflightScope
from resolver.contract.errors import CallbackError
from resolver.contract.inbound import secret_value
from resolver.core.logs import register_secret
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token, token_installations

TIMEOUT_SECONDS: Final = 10
TOKEN, SCOPES = "slack bot token", "slack scopes"
ERROR_CODE: Final = re.compile(r"[a-z0-9_.]{1,80}")
"""Slack's error codes are short snake_case words: https://docs.slack.dev/reference/methods/auth.test"""


def checks(scope: PreflightScope) -> list[Check]:
    settings = scope.settings
    teams = token_installations("slack")
    if teams:
        return [check for team in teams for check in team_checks(settings, team)]
    if secret_value(SlackSettings.of(settings).signing_secret) is None:
        return []
    return [
        Check(
            TOKEN,
            "fail",
            "no Slack bot token is stored, so replies cannot be posted: install the app from "
            "/setup, or store its xoxb- token with `resolver tokens set --provider slack "
            "--installation TEAM_ID --kind bot`",
        )
    ]


def team_checks(settings: Settings, team: str) -> list[Check]:
    """`auth.test` with the team's bot token, then its granted scopes."""
    token = stored_token("slack", installation=team, settings=settings)
    if token is None:  # expired since it was listed
        return [Check(f"{TOKEN} {team}", "fail", f"the bot token of {team} has expired")]
    register_secret(token)
    try:
        with answers.reading(ERRORS, "auth.test"):
            answer = slack_session(settings, token, TIMEOUT_SECONDS).auth_test()
            user, name = answers.text(answer["user"]), answers.text(answer["team"])
    except SlackApiError as error:
        code = _refusal(error.response)
        if code is None:  # a page or a body slack_sdk could not read: no refusal of Slack's
            return [_failed(team, ERRORS.unusable_answer("auth.test", ValueError("no code")))]
        return [
            Check(
                f"{TOKEN} {team}",
                "fail",
                f"Slack refused the stored bot token of {team} ({code}): reinstall the app in "
                "that workspace from /setup",
            )
        ]
    except UnreadableAnswerError as error:
        return [_failed(team, ERRORS.unusable_answer("auth.test", error))]
    except CallbackError as error:
        return [_failed(team, error)]
    except NETWORK_ERRORS as error:
        where = SlackSettings.of(settings).api_url
        return [
            Check(f"{TOKEN} {team}", "fail", f"{where} cannot be reached ({type(error).__name__})")
        ]
    ok = Check(f"{TOKEN} {team}", "ok", f"posts as @{user} in {name}")
    return [ok, scopes_check(team, _header(answer.headers, "x-oauth-scopes"))]


def _refusal(response: SlackResponse) -> str | None:
    """Slack's error code (`invalid_auth`) when its answer is one; None for anything else (a
    proxy's page, which slack_sdk reports as an error whose text quotes it)."""
    data = response.data
    code = data.get("error") if isinstance(data, dict) else None
    return code if isinstance(code, str) and ERROR_CODE.fullmatch(code) else None


def _failed(team: str, error: CallbackError) -> Check:
    return Check(f"{TOKEN} {team}", "fail", f"{error}: reinstall the app or try again later")


def scopes_check(team: str, granted_header: str | None) -> Check:
    """The manifest's BOT_SCOPES against those Slack says the token has."""
    if granted_header is None:
        return Check(f"{SCOPES} {team}", "fail", "Slack did not name the token's scopes")
    granted = {part.strip() for part in granted_header.split(",") if part.strip()}
    missing = [name for name in BOT_SCOPES if name not in granted]
    if not missing:
        return Check(f"{SCOPES} {team}", "ok", ", ".join(BOT_SCOPES))
    return Check(
        f"{SCOPES} {team}",
        "fail",
        f"missing {', '.join(missing)}: add them under OAuth & Permissions, then reinstall the "
        "app in the workspace",
    )


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return str(value[0] if isinstance(value, list) else value)
    return None
