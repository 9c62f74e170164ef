"""Fixtures for the Forgejo edge: a local Forgejo with the bot's token and a repository, and
the client pointed at it; the end-to-end tests' stand-in and git server (flow.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from integrations.forgejo.client import ForgejoClient
from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Repo
from tests.integrations.forgejo.flow import forgejo_git, forgejo_standin

__all__ = ["client", "forgejo_api", "forgejo_git", "forgejo_standin", "repo"]

REPO = "forgejo/widgets"
BOT = "resolver"
BOT_TOKEN = "b0t" * 14


@pytest.fixture
def forgejo_api() -> Iterator[ForgejoAPI]:
    with ForgejoAPI() as api:
        api.add_token(BOT_TOKEN, BOT)
        yield api


@pytest.fixture
def repo(forgejo_api: ForgejoAPI) -> Repo:
    """`forgejo/widgets`: the bot administers it (it may read others' permissions), alice
    writes, bob reads; issue #7 is open."""
    repo = forgejo_api.add_repo(REPO, f"{forgejo_api.url}/{REPO}.git")
    for login, mode in ((BOT, "admin"), ("alice", "write"), ("bob", "read")):
        forgejo_api.add_collaborator(repo, login, mode)
    forgejo_api.add_issue(repo, 7)
    return repo


@pytest.fixture
def client(forgejo_api: ForgejoAPI) -> ForgejoClient:
    return ForgejoClient(forgejo_api.url, lambda: BOT_TOKEN, user_agent="Resolver (resolver)")
