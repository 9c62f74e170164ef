"""Fixtures for the Bitbucket edge: a local Bitbucket Cloud with the bot's token and a
repository, and the client pointed at it; the end-to-end tests' stand-in and git server
(flow.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from integrations.bitbucket.client import BitbucketClient
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.state import Pull, Repo
from tests.integrations.bitbucket.flow import bitbucket_git, bitbucket_standin

__all__ = ["bitbucket_api", "bitbucket_git", "bitbucket_standin", "client", "pull", "repo"]

REPO = "acme/widgets"
BOT = "resolver"
BOT_TOKEN = "bbat" * 10


@pytest.fixture
def bitbucket_api() -> Iterator[BitbucketAPI]:
    with BitbucketAPI() as api:
        api.add_token(BOT_TOKEN, BOT)
        yield api


@pytest.fixture
def repo(bitbucket_api: BitbucketAPI) -> Repo:
    """`acme/widgets`: the bot administers it (it may read who may write), alice writes, bob
    reads."""
    repo = bitbucket_api.add_repo(REPO, f"{bitbucket_api.url}/{REPO}.git")
    for nickname, permission in ((BOT, "admin"), ("alice", "write"), ("bob", "read")):
        bitbucket_api.grant(repo, nickname, permission)
    return repo


@pytest.fixture
def pull(bitbucket_api: BitbucketAPI, repo: Repo) -> Pull:
    """alice's pull request #1 from `feature/empty-input`."""
    return bitbucket_api.add_pull(repo, "feature/empty-input", "Handle empty input", author="alice")


@pytest.fixture
def client(bitbucket_api: BitbucketAPI) -> BitbucketClient:
    return BitbucketClient(
        bitbucket_api.api_url, lambda: BOT_TOKEN, user_agent="Resolver (resolver)"
    )
