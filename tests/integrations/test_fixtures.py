"""Layer 1: every recorded payload verifies, parses and routes. Layer 3: the route tables and
the fixtures agree (every route has a fixture; every fixture is routed or ignored)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from resolver.contract.inbound import route_event
from resolver.core.settings import get_settings
from resolver.ingress.endpoint import policy_for
from tests.integrations.deliveries import (
    BY_NAME,
    PROVIDERS,
    fixture_key,
    fixture_paths,
    post,
    signed,
    stem,
)

ALL = [(provider, path) for provider in PROVIDERS for path in fixture_paths(provider)]


@pytest.mark.parametrize(("provider", "path"), ALL, ids=[f"{p}:{f.stem}" for p, f in ALL])
def test_every_fixture_verifies_parses_and_routes(
    webhook_env: Any, provider: str, path: Path
) -> None:
    integration = BY_NAME[provider]
    key = fixture_key(provider, path)
    delivery = signed(provider, key, json.loads(path.read_text()))
    headers = {name.lower(): value for name, value in delivery.headers.items()}
    settings = get_settings()
    integration.verify(headers, delivery.body, settings, time.time())
    event = integration.parse(headers, delivery.body)
    assert event.key == key
    route_event(integration.routes, event, policy_for(settings))


@pytest.mark.parametrize(("provider", "path"), ALL, ids=[f"{p}:{f.stem}" for p, f in ALL])
def test_every_fixture_is_answered_without_error(client: Any, provider: str, path: Path) -> None:
    delivery = signed(provider, fixture_key(provider, path), json.loads(path.read_text()))
    assert post(client, delivery).status_code in (200, 202, 204)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_route_has_a_fixture(provider: str) -> None:
    prefixes = {path.name.split("__", 1)[0] for path in fixture_paths(provider)}
    missing = [key for key in BY_NAME[provider].routes if stem(key) not in prefixes]
    assert missing == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_fixture_is_routed_or_ignored(provider: str) -> None:
    integration = BY_NAME[provider]
    known = set(integration.routes) | set(integration.ignored)
    strays = [p.name for p in fixture_paths(provider) if fixture_key(provider, p) not in known]
    assert strays == []
    assert all("__" in path.name for path in fixture_paths(provider))  # <event>__<detail>


@pytest.mark.parametrize("provider", PROVIDERS)
def test_routes_and_ignored_events_do_not_overlap(provider: str) -> None:
    integration = BY_NAME[provider]
    assert set(integration.routes).isdisjoint(integration.ignored)
