"""A work item names no repository: it routes like a tracker's ticket, on Azure Repos. An
inline `repo=Project/Repository` is on Azure DevOps itself, as is a project's default
(`resolver routes set azuredevops <Project> <Project/Repository>`); without either the bot
asks. A pull request names its own repository."""

from __future__ import annotations

import json

import pytest

from integrations import registry
from integrations.azuredevops.events import parse_event
from integrations.azuredevops.routes import ROUTES
from resolver.contract.inbound import Policy, Trigger, route_event
from resolver.contract.triggers import TaskTrigger
from resolver.store.db import session_scope
from resolver.store.repo_defaults import set_route
from resolver.worker.plan import repository_of
from resolver.worker.values import Snapshot, Stop
from tests.integrations.azuredevops.deliveries import headers_for, load
from tests.integrations.conftest import Store

POLICY = Policy(bot_name="resolver", trigger_label="resolver")


def routed(name: str, text: str | None = None) -> Trigger:
    payload = load(name)
    if text is not None:
        payload["resource"]["fields"]["System.History"] = text
    body = json.dumps(payload).encode()
    found = route_event(ROUTES, parse_event(headers_for(), body), POLICY)
    assert isinstance(found, Trigger)
    return found


def snapshot(trigger: Trigger) -> Snapshot:
    subject: TaskTrigger = trigger.subject
    return Snapshot(1, "azuredevops", trigger.task, trigger.repo, "alice", 1, subject, None, None)


def repository_for(asked: Snapshot) -> tuple[str, str]:
    with session_scope() as session:
        return repository_of(session, asked)


def test_an_inline_repository_is_on_azure_devops(store: Store) -> None:
    found = routed("workitem.commented__mention", "@resolver fix it repo=Widgets/api")
    assert repository_for(snapshot(found)) == ("azuredevops", "Widgets/api")


def test_another_forges_repository_may_be_named_with_its_prefix(store: Store) -> None:
    found = routed("workitem.commented__mention", "@resolver fix it repo=github:octo/widgets")
    assert repository_for(snapshot(found)) == ("github", "octo/widgets")


def test_the_projects_default_repository_is_on_azure_devops(store: Store) -> None:
    forge, name = registry.check_route("azuredevops", "Widgets/widgets")
    assert (forge, name) == ("azuredevops", "Widgets/widgets")
    with session_scope() as session:
        set_route(session, "azuredevops", "Widgets", forge, name)
    found = routed("workitem.commented__mention")
    assert repository_for(snapshot(found)) == ("azuredevops", "Widgets/widgets")


def test_without_a_repository_the_bot_asks(store: Store) -> None:
    with pytest.raises(Stop) as asked:
        repository_for(snapshot(routed("workitem.commented__mention")))
    assert "Which repository should I work on?" in str(asked.value)
    assert "resolver routes set azuredevops Widgets owner/name" in str(asked.value)


def test_a_pull_request_names_its_own_repository(store: Store) -> None:
    payload = load("ms.vss-code.git-pullrequest-comment-event__in_thread")
    body = json.dumps(payload).encode()
    found = route_event(ROUTES, parse_event(headers_for(), body), POLICY)
    assert isinstance(found, Trigger)
    assert repository_for(snapshot(found)) == ("azuredevops", "Widgets/widgets")
