"""Fixtures for the Slack edge: a local Slack Web API with a workspace, its bot and a channel,
and a migrated SQLite database for stored tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from integrations import registry
from integrations.slack.client import SlackClient
from integrations.slack.standin.api import TEAM_ID, Identity, SlackAPI
from resolver.core.settings import Settings, get_settings
from resolver.store.accounts import ensure_installation
from resolver.store.db import engine_for, session_scope
from resolver.store.migrate import upgrade
from resolver.store.vault import Vault, store_credential
from tests.conftest import reset_caches

BOT_TOKEN = "xoxb-1111-2222-" + "Qm9uIGFwcGV0aXQ" * 2
CHANNEL = "C0GENERAL"
ALICE = "U0ALICE"
BOT = "resolver"

__all__ = ["ALICE", "BOT_TOKEN", "CHANNEL", "TEAM_ID", "make_settings", "store_bot_token"]


def make_settings(api_url: str) -> Settings:
    """Settings for a client test: Slack at `api_url`, nothing read from the environment."""
    secret = Fernet.generate_key().decode()
    values = {"secret_keys": secret, "slack_api_url": api_url, "bot_name": BOT}
    return registry.settings(values, env_file=False)


@pytest.fixture
def slack_api() -> Iterator[SlackAPI]:
    """The Slack stand-in with the bot installed in `TEAM_ID` and a member of `CHANNEL`."""
    api = SlackAPI()
    api.add_bot(BOT_TOKEN)
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


@pytest.fixture
def resolver_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack_api: SlackAPI
) -> Iterator[Settings]:
    """RESOLVER_* settings with a migrated SQLite database and Slack at the stand-in (no Redis:
    the outbound side never touches it)."""
    url = f"sqlite:///{tmp_path / 'resolver.db'}"
    monkeypatch.setenv("RESOLVER_DATABASE_URL", url)
    monkeypatch.setenv("RESOLVER_SECRET_KEYS", Fernet.generate_key().decode())
    monkeypatch.setenv("RESOLVER_SLACK_API_URL", slack_api.base_url)
    monkeypatch.chdir(tmp_path)  # away from any .env
    reset_caches()
    upgrade(url)
    yield get_settings()
    reset_caches()
    engine_for(url).dispose()


def store_bot_token(team_id: str, token: str) -> None:
    """What `resolver tokens set --provider slack --installation <team_id> --kind bot` stores."""
    with session_scope() as session:
        installation = ensure_installation(session, "slack", team_id)
        store_credential(
            session,
            Vault(get_settings().fernet_keys),
            provider="slack",
            kind="bot",
            secret=token,
            installation_id=installation.id,
        )
