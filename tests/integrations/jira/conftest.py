"""Fixtures for the Jira edge: a local Jira (Cloud, and Data Center under a context path), a
Resolver environment whose database holds the site's token, and the ticket as a conversation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from integrations import registry
from integrations.jira.provider import JiraConversation
from integrations.jira.standin.api import JiraAPI, User
from resolver.contract.triggers import read_trigger
from resolver.core.settings import get_settings
from resolver.store.accounts import ensure_installation
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.conftest import ResolverEnv

EMAIL = "resolver-bot@example.com"
API_TOKEN = "ATATT3xFfGF0" + "Qm9" * 12  # an Atlassian API token's shape
PAT = "NjM4OTQ1MTIzNDU2Onh" + "kQ3" * 8  # a Data Center personal access token's shape
ISSUE = "SP-10"
BOT = "resolver"


@pytest.fixture
def jira() -> Iterator[JiraAPI]:
    """Jira Cloud at the root of its server, with the bot's API token and one issue."""
    api = JiraAPI()
    yield api
    api.close()


@pytest.fixture
def bot(jira: JiraAPI) -> User:
    user = jira.add_user("Resolver", account_type="app")
    jira.add_api_token(EMAIL, API_TOKEN, user)
    jira.add_issue(ISSUE, summary="Export fails", description="Exports time out.")
    return user


@pytest.fixture
def jira_dc() -> Iterator[JiraAPI]:
    """Jira Data Center under `/jira`, with the bot's personal access token."""
    api = JiraAPI(deployment="Server", context_path="/jira")
    user = api.add_user("Resolver Bot", name=BOT)
    api.add_pat(PAT, user)
    api.add_issue(ISSUE, summary="Export fails")
    yield api
    api.close()


def store_site_token(site: str, secret: str) -> None:
    """What `resolver tokens set --provider jira --installation <site>` stores."""
    with session_scope() as session:
        installation = ensure_installation(session, "jira", site)
        vault = Vault(get_settings().fernet_keys)
        store_credential(
            session,
            vault,
            provider="jira",
            kind="pat",
            secret=secret,
            installation_id=installation.id,
        )


@pytest.fixture
def env(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> ResolverEnv:
    """A migrated database and the bot's name; settings are read again from this environment."""
    monkeypatch.setenv("RESOLVER_BOT_NAME", BOT)
    get_settings.cache_clear()
    return resolver_env


def context(site: str | None, **extra: object) -> dict[str, object]:
    """The trigger context `integrations.jira.routes` records for a comment."""
    return {"site": site, "issue_key": ISSUE, "comment_id": "10042", "title": "Export", **extra}


@pytest.fixture
def conversation(env: ResolverEnv, jira: JiraAPI, bot: User) -> JiraConversation:
    """The Cloud ticket, as the provider registry builds it from a trigger."""
    store_site_token(jira.site, f"{EMAIL}:{API_TOKEN}")
    found = registry.conversation("jira", read_trigger(context(jira.site)), None, get_settings())
    assert isinstance(found, JiraConversation)
    return found
