"""Every recorded payload that makes a trigger makes a typed value of the kind its event
means, and that value survives being stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resolver.contract.inbound import Trigger, route_event
from resolver.contract.triggers import dump_trigger, read_trigger
from resolver.core.settings import get_settings
from resolver.ingress.endpoint import policy_for
from tests.integrations.deliveries import BY_NAME, PROVIDERS, fixture_key, fixture_paths, signed

ALL = [(provider, path) for provider in PROVIDERS for path in fixture_paths(provider)]
KINDS = {
    "issue_comment.created__on_issue": "forge_issue",
    "issue_comment.created__on_pull_request": "pull_request",
    "check_run.completed__failure_on_bot_branch": "ci_failure",
    "Pipeline_Hook": "ci_failure",
    "push": "base_push",
    "Push_Hook": "base_push",
    "pull_request_review": "review_batch",
    "slack": "chat_thread",
    "jira": "tracker_ticket",
    "linear": "tracker_ticket",
}


@pytest.mark.parametrize(("provider", "path"), ALL, ids=[f"{p}:{f.stem}" for p, f in ALL])
def test_every_trigger_reads_as_a_typed_value(webhook_env: Any, provider: str, path: Path) -> None:
    integration = BY_NAME[provider]
    delivery = signed(provider, fixture_key(provider, path), json.loads(path.read_text()))
    headers = {name.lower(): value for name, value in delivery.headers.items()}
    event = integration.parse(headers, delivery.body)
    found = route_event(integration.routes, event, policy_for(get_settings()))
    if not isinstance(found, Trigger):
        return
    value = read_trigger(dump_trigger(found.subject))
    expected = next((k for name, k in KINDS.items() if path.stem.startswith(name)), None)
    expected = expected or KINDS.get(provider)
    if expected is not None:
        assert value.kind == expected
    assert read_trigger(json.loads(json.dumps(dump_trigger(value)))) == value
