"""Fixtures for the Slack edge: a local Slack Web API with a workspace, its bot and a channel."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet

from integrations.slack.client import SlackClient
from resolver.config import Settings
from tests.support.slack_api import TEAM_ID, Identity, SlackAPI

BOT_TOKEN = "xoxb-1111-2222-" + "Qm9uIGFwcGV0aXQ" * 2
CHANNEL = "C0GENERAL"
ALICE = "U0ALICE"
BOT = "resolver"

__all__ = ["ALICE", "BOT_TOKEN", "CHANNEL", "TEAM_ID", "make_settings"]


def make_settings(api_url: str, **extra: object) -> Settings:
    values: dict[str, object] = {
        "secret_keys": Fernet.generate_key().decode(),
        "slack_api_url": api_url,
        "bot_name": BOT,
        **extra,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
def slack_api() -> Iterator[SlackAPI]:
    """The Slack stand-in with the bot installed in `TEAM_ID` and a member of `CHANNEL`."""
    api = SlackAPI()
    api.add_bot(BOT_TOKEN)
    api.add_user(ALICE, "alice")
    api.add_channel(CHANNEL)
    yield api
    api.close()


@pytest.fixture
def bot(slack_api: SlackAPI) -> Identity:
    return slack_api.tokens[BOT_TOKEN]


@pytest.fixture
def settings(slack_api: SlackAPI) -> Settings:
    return make_settings(slack_api.base_url)


@pytest.fixture
def client(settings: Settings) -> SlackClient:
    return SlackClient(settings, BOT_TOKEN)
