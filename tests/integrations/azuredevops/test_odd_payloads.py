"""A signed delivery whose fields are of the wrong type or out of range is refused as malformed
(400) or read as naming nothing, never an error of the code that reads it (a 500). Pure."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from integrations.azuredevops.events import parse_event
from integrations.azuredevops.routes import ROUTES
from resolver.contract.inbound import MalformedError, Policy, Trigger, route_event
from tests.integrations.azuredevops.deliveries import headers_for, load

POLICY = Policy(bot_name="resolver", trigger_label="resolver")
Mutation = Callable[[dict[str, Any]], None]


def _fields(payload: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = payload["resource"]["fields"]
    return fields


CASES: list[tuple[str, Mutation]] = [
    ("workitem.commented__mention", lambda p: _fields(p).update({"System.History": 5})),
    ("workitem.commented__mention", lambda p: _fields(p).update({"System.History": ["@resolver"]})),
    ("workitem.commented__mention", lambda p: _fields(p).update({"System.Description": {}})),
    ("workitem.commented__mention", lambda p: _fields(p).update({"System.ChangedBy": {"id": 5}})),
    (
        "workitem.updated__assigned_to_bot",
        lambda p: _fields(p)["System.AssignedTo"].update({"newValue": {"id": None}}),
    ),
    (
        "build.complete__failed_pull_request_build",
        lambda p: p["resource"]["triggerInfo"].update({"pr.number": "\u00b2"}),
    ),
    (
        "build.complete__failed_pull_request_build",
        lambda p: p["resource"]["triggerInfo"].update({"pr.number": "1" * 5000}),
    ),
    (
        "ms.vss-code.git-pullrequest-comment-event__in_thread",
        lambda p: p["resource"]["comment"]["_links"]["threads"].update(
            {"href": "https://dev.azure.example/threads/" + "1" * 5000}
        ),
    ),
    (
        "ms.vss-code.git-pullrequest-comment-event__on_the_bots_pull_request",
        lambda p: p["resource"]["comment"].update({"publishedDate": "9999-12-31T23:59:59Z"}),
    ),
]


@pytest.mark.parametrize(("name", "mutate"), CASES)
def test_an_odd_field_is_malformed_or_names_nothing(name: str, mutate: Mutation) -> None:
    payload = load(name)
    mutate(payload)
    event = parse_event(headers_for(), json.dumps(payload).encode())
    try:
        found = route_event(ROUTES, event, POLICY)
    except MalformedError:
        return
    assert found is None or isinstance(found, Trigger)
