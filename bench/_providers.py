"""Each installed provider's verify + parse + route cost, in process, beside GitHub's: one
recorded mention of each (its first routed comment fixture, signed as the provider signs it
by the tests' fakes) through the provider's own `verify`, `parse` and its route table, many
times over. No server, database or network: what a delivery costs before the write."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.integrations' fakes

from integrations import registry
from resolver.contract.inbound import Policy, Trigger, route_event
from resolver.contract.provider import Provider
from resolver.core.settings import Settings
from tests.integrations.conftest import webhook_vars
from tests.integrations.deliveries import fixture_key, fixture_paths, load, signed

POLICY = Policy(bot_name="resolver", trigger_label="resolver")


def _mention(provider: Provider) -> tuple[bytes, dict[str, str]] | None:
    """A routed comment fixture of `provider` that makes a trigger, signed; None without one."""
    settings = _settings()
    integration = provider.integration
    for path in fixture_paths(provider.name):
        key = fixture_key(provider.name, path)
        if key not in integration.routes or "comment" not in path.name.lower():
            continue
        delivery = signed(provider.name, key, _mentioning(load(provider.name, path.stem)))
        headers = {k.lower(): v for k, v in delivery.headers.items()}
        integration.verify(headers, delivery.body, settings, time.time())
        event = integration.parse(headers, delivery.body)
        if isinstance(route_event(integration.routes, event, POLICY), Trigger):
            return delivery.body, headers
    return None


def _mentioning(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with its comment's text a mention of the bot (as bench/ingress's GitHub
    mention), where it has one: the first `body` or `content` of a `comment`, at the top or
    in the `resource`."""
    for holder in (payload, payload.get("resource")):
        comment = holder.get("comment") if isinstance(holder, dict) else None
        if not isinstance(comment, dict):
            continue
        for name in ("body", "content"):
            if isinstance(comment.get(name), str):
                comment[name] = "@resolver please fix the flaky export test"
                return payload
    return payload


def _settings() -> Settings:
    env = webhook_vars(Path("/nonexistent/bench.db"))
    values = {k.removeprefix("RESOLVER_").lower(): v for k, v in env.items()}
    return registry.settings(values, env_file=False)


def cost_us(provider: Provider, body: bytes, headers: dict[str, str], rounds: int) -> float:
    """Microseconds per delivery through verify, parse and route."""
    settings, integration = _settings(), provider.integration
    start = time.perf_counter()
    for _ in range(rounds):
        integration.verify(headers, body, settings, time.time())
        event = integration.parse(headers, body)
        route_event(integration.routes, event, POLICY)
    return (time.perf_counter() - start) / rounds * 1e6


def report(rounds: int = 2000) -> None:
    """A line per provider: its cost, and as a multiple of GitHub's."""
    costs = {}
    for provider in registry.installed():
        found = _mention(provider)
        if found is not None:
            costs[provider.name] = cost_us(provider, *found, rounds)
    base = costs.get("github")
    print(f"verify + parse + route, in process ({rounds} rounds each)")
    print(f"  {'provider':14}{'µs':>8}{'of GitHub':>10}")
    for name, cost in costs.items():
        ratio = f"{cost / base:10.2f}" if base else ""
        print(f"  {name:14}{cost:8.1f}{ratio}")
