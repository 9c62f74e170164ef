"""Fixtures for the Azure DevOps edge: a local organisation with the bot's token and a
repository, and the client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from integrations.azuredevops.client import AzureDevOpsClient
from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.state import Repo

BOT_TOKEN = "azb0t" * 10
REPO = "Widgets/widgets"


@pytest.fixture
def azure_api() -> Iterator[AzureDevOpsAPI]:
    with AzureDevOpsAPI() as api:
        api.add_person("resolver@contoso.com", token=BOT_TOKEN)
        yield api


@pytest.fixture
def repo(azure_api: AzureDevOpsAPI) -> Repo:
    """`Widgets/widgets`: the bot and alice contribute, bob reads; work item 7 exists."""
    repo = azure_api.add_repo(REPO, f"{azure_api.url}/Widgets/_git/widgets")
    for name, contribute in (("resolver", True), ("alice", True), ("bob", False)):
        azure_api.allow(repo, azure_api.add_person(f"{name}@contoso.com"), contribute=contribute)
    azure_api.add_work_item("Widgets", 7)
    return repo


@pytest.fixture
def client(azure_api: AzureDevOpsAPI) -> AzureDevOpsClient:
    return AzureDevOpsClient(azure_api.url, lambda: BOT_TOKEN, user_agent="Resolver (resolver)")
