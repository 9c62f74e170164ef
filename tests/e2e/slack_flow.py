"""The Slack side of the end-to-end tests: a workspace on the stand-in, its bot, and mentions.

The code lives on the GitHub stand-in (`github_flow.widgets`). A Slack trigger comes through no
GitHub App installation, so the job acts on GitHub with alice's own stored token.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from integrations.github.standin.api import GitHubAPI
from integrations.slack.standin.api import TEAM_ID, SlackAPI
from resolver.core.settings import get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.e2e.github_flow import ALICE_ID
from tests.e2e.stack import Stack
from tests.integrations.deliveries import SECRETS, load

CHANNEL = "C0WIDGETS"
ALICE = "U0ALICE"
BOT_USER = "U0BOT"
BOT_TOKEN = "xoxb-4242-" + "U2xhY2tCb3RUb2tlbg" * 2
ALICE_GITHUB_TOKEN = "ghp_" + "A1iceT0ken" * 4


def slack_settings(slack_api: SlackAPI, github_api: GitHubAPI) -> dict[str, str]:
    return {
        "RESOLVER_SLACK_SIGNING_SECRET": SECRETS["slack"],
        "RESOLVER_SLACK_API_URL": slack_api.base_url,
        "RESOLVER_GITHUB_API_URL": github_api.base_url,
    }


def workspace(slack_api: SlackAPI) -> None:
    """The bot installed in `TEAM_ID`, a member of `CHANNEL`."""
    slack_api.add_bot(BOT_TOKEN, user_id=BOT_USER)
    slack_api.add_channel(CHANNEL)


def link_alice(stack: Stack, github_api: GitHubAPI, *, on_slack: bool = True) -> None:
    """alice as Slack knows her (`TEAM:USER`, as the route names senders; unless not
    `on_slack`) and as GitHub does, with her GitHub token stored; the workspace's bot token
    stored for the team."""
    if on_slack:
        stack.link("alice", "slack", f"{TEAM_ID}:{ALICE}", ALICE)
    stack.link("alice", "github", str(ALICE_ID), "alice")
    github_api.add_token(ALICE_GITHUB_TOKEN, "alice")
    vault = Vault(get_settings().fernet_keys)
    with session_scope() as session:
        alice = accounts.get_user(session, "alice")
        store_credential(
            session,
            vault,
            provider="github",
            kind="token",
            secret=ALICE_GITHUB_TOKEN,
            user_id=alice.id,
        )
        installation = accounts.ensure_installation(session, "slack", TEAM_ID)
        store_credential(
            session,
            vault,
            provider="slack",
            kind="bot",
            secret=BOT_TOKEN,
            installation_id=installation.id,
        )


def app_mention(slack_api: SlackAPI, text: str) -> tuple[dict[str, Any], str]:
    """A recorded `app_mention` of the bot by alice in `CHANNEL`, saying `text` after the
    mention; the message is on the stand-in too (so it can take 👀). Returns it and its ts."""
    body = f"<@{BOT_USER}> {text}"
    ts = slack_api.add_message(CHANNEL, ALICE, body)
    payload = load("slack", "app_mention__in_channel")
    payload.update(team_id=TEAM_ID, event_id=f"Ev{uuid.uuid4().hex[:10].upper()}")
    payload["authed_users"] = [BOT_USER]
    payload["event"].update(user=ALICE, text=body, ts=ts, channel=CHANNEL, event_ts=ts)
    return payload, ts


@pytest.fixture
def slack_api() -> Iterator[SlackAPI]:
    """The Slack stand-in with the test workspace (a fixture: import it into a conftest)."""
    api = SlackAPI()
    workspace(api)
    yield api
    api.close()
