"""Fixtures for the Linear edge: a local Linear GraphQL API with a workspace, its bot (an OAuth
app and a personal API key), a Resolver environment to store their tokens in, and the
conversation of a triggering comment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from integrations import registry
from integrations.linear.provider import LinearConversation
from integrations.linear.standin.api import Actor, LinearAPI, LinearComment, LinearIssue
from resolver.contract.triggers import read_trigger
from resolver.core.settings import get_settings
from resolver.store.accounts import ensure_installation
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.conftest import ResolverEnv

API_KEY = "lin_api_" + "k7Q2" * 10
OAUTH_TOKEN = "lin_oauth_" + "9f3e" * 16
ORGANIZATION = "5c8a1d2e-0f3b-4a6c-9d7e-1f2a3b4c5d6e"
BOT = "resolver"


@pytest.fixture
def linear() -> Iterator[LinearAPI]:
    api = LinearAPI()
    yield api
    api.close()


@pytest.fixture
def app(linear: LinearAPI) -> Actor:
    """Resolver as an OAuth app acting as itself (`actor=app`)."""
    actor = linear.add_app("Resolver")
    linear.add_oauth_token(OAUTH_TOKEN, actor)
    return actor


@pytest.fixture
def service_user(linear: LinearAPI) -> Actor:
    """Resolver as a workspace member with a personal API key."""
    user = linear.add_user("Resolver", display_name=BOT)
    linear.add_api_key(API_KEY, user)
    return user


@pytest.fixture
def ann(linear: LinearAPI) -> Actor:
    return linear.add_user("Ann Example", display_name="ann")


@pytest.fixture
def issue(linear: LinearAPI) -> LinearIssue:
    return linear.add_issue("ENG-1778", title="Export fails", description="Exports time out.")


def store_workspace_token(organization_id: str, secret: str) -> None:
    """What `resolver tokens set --provider linear --installation <organization id>` stores."""
    with session_scope() as session:
        installation = ensure_installation(session, "linear", organization_id)
        store_credential(
            session,
            Vault(get_settings().fernet_keys),
            provider="linear",
            kind="oauth",
            secret=secret,
            installation_id=installation.id,
        )


@pytest.fixture
def env(
    resolver_env: ResolverEnv, linear: LinearAPI, monkeypatch: pytest.MonkeyPatch
) -> ResolverEnv:
    """A migrated database; settings point at the local Linear and name the bot."""
    monkeypatch.setenv("RESOLVER_BOT_NAME", BOT)
    monkeypatch.setenv("RESOLVER_LINEAR_API_URL", linear.url)
    get_settings.cache_clear()
    return resolver_env


def comment_context(issue: LinearIssue, comment: LinearComment) -> dict[str, object]:
    """The trigger context `integrations.linear.routes` records for a comment."""
    return {
        "issue_id": issue.id,
        "organization_id": ORGANIZATION,
        "comment_id": comment.id,
        "parent_comment_id": comment.parent_id,
        "issue_identifier": issue.identifier,
        "title": issue.title,
    }


def label_context(issue: LinearIssue) -> dict[str, object]:
    """The trigger context `integrations.linear.routes` records for a label: no comment."""
    return {"issue_id": issue.id, "organization_id": ORGANIZATION, "label": "resolver"}


@pytest.fixture
def trigger(linear: LinearAPI, issue: LinearIssue, ann: Actor) -> LinearComment:
    return linear.add_comment(issue, "@resolver fix the export", ann)


@pytest.fixture
def conversation(
    env: ResolverEnv, app: Actor, issue: LinearIssue, trigger: LinearComment
) -> LinearConversation:
    store_workspace_token(ORGANIZATION, OAUTH_TOKEN)
    found = registry.conversation(
        "linear", read_trigger(comment_context(issue, trigger)), None, get_settings()
    )
    assert isinstance(found, LinearConversation)
    return found
