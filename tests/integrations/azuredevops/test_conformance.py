"""The webhook fixtures and the stand-in speak Azure DevOps's API as Microsoft publishes it:
every route of the stand-in is an operation of the descriptions (spec_subset.json, made from
`vsts-rest-api-specs`), and every object in a recorded payload has only keys its definition
names. The client's requests and the stand-in's answers are checked in test_client.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from integrations.azuredevops.standin.conformance import (
    description,
    operations,
    request_problems,
    shape_problems,
)
from integrations.azuredevops.standin.handlers import ROUTES
from tests.integrations.deliveries import fixture_paths

# What each event's resource (or a part of it) is, in the descriptions' definitions.
RESOURCES: dict[str, dict[str, str]] = {
    "ms.vss-code.git-pullrequest-comment-event": {
        "comment": "git:Comment",
        "pullRequest": "git:GitPullRequest",
    },
    "git.pullrequest.created": {"": "git:GitPullRequest"},
    "git.pullrequest.updated": {"": "git:GitPullRequest"},
    "git.push": {"repository": "git:GitRepository", "pushedBy": "git:IdentityRef"},
    "workitem.commented": {"": "wit:WorkItem"},
    "workitem.created": {"": "wit:WorkItem"},
    "workitem.updated": {"revisedBy": "wit:IdentityRef", "revision": "wit:WorkItem"},
    "build.complete": {"": "build:Build"},
}


def test_the_subset_names_its_source_and_the_operations_resolver_calls() -> None:
    assert "vsts-rest-api-specs at commit" in description()["source"]
    assert len(operations()) > 100


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_stand_in_route_is_a_published_operation(route: str) -> None:
    assert route in operations()


@pytest.mark.parametrize("path", fixture_paths("azuredevops"), ids=lambda p: p.stem)
def test_every_fixture_object_is_the_published_shape(path: Path) -> None:
    payload: dict[str, Any] = json.loads(path.read_text())
    parts = RESOURCES[payload["eventType"]]
    resource = payload["resource"]
    problems = [
        problem
        for field, kind in parts.items()
        for problem in shape_problems(kind, resource[field] if field else resource, path.stem)
    ]
    assert not problems


def test_a_request_the_descriptions_lack_is_named() -> None:
    assert request_problems("GET", "/contoso/_apis/nothing", {}, None)
    bad_version = request_problems(
        "GET", "/contoso/Widgets/_apis/git/repositories/widgets", {"api-version": ["6.0"]}, None
    )
    assert bad_version and "api-version" in bad_version[0]
    extra = request_problems(
        "POST",
        "/contoso/Widgets/_apis/git/repositories/widgets/pullrequests",
        {"api-version": ["7.1"]},
        {"isDraft": True, "draft": True},
    )
    assert extra and "draft" in extra[0]
