"""Each installed provider's verify and route cost, in process: its recorded mentions (the
fixtures of comments that make a job), signed as the provider signs them, taken through the
provider's own verify, parse and route, as the ingress runs them before anything is written.

Figures only: the microseconds per delivery (the best of a few rounds), beside GitHub's.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resolver.core.settings import Settings

ROUNDS = 5
REQUEST = "please fix the flaky export test"


Mention = tuple[str, str, bytes, dict[str, str], float]


def mentions(settings: Settings) -> list[Mention]:
    """(provider, event key, body, lower-cased headers, when signed) of every recorded comment
    fixture that routes to a job, signed with the test secrets."""
    from integrations import registry
    from resolver.contract.inbound import Trigger, route_event
    from resolver.ingress.endpoint import policy_for
    from tests.integrations.deliveries import fixture_key, fixture_paths, signed
    from tests.integrations.test_fuzz import _set_text as set_text

    policy = policy_for(settings)
    found = []
    for provider in registry.installed():
        integration = provider.integration
        for path in fixture_paths(provider.name):
            if "comment" not in path.name.lower() and "note" not in path.name.lower():
                continue
            key, payload = fixture_key(provider.name, path), json.loads(path.read_text())
            try:
                set_text(provider.name, payload, f"@{settings.bot_name} {REQUEST}")
            except (KeyError, TypeError):  # a comment fixture of another shape
                continue
            at, delivery = time.time(), signed(provider.name, key, payload)
            headers = {name.lower(): value for name, value in delivery.headers.items()}
            event = integration.parse(headers, delivery.body)
            if isinstance(route_event(integration.routes, event, policy), Trigger):
                found.append((provider.name, key, delivery.body, headers, at))
    return found


def per_delivery(settings: Settings, mention: Mention, loops: int) -> float:
    """Microseconds per delivery for verify, parse and route, the best of ROUNDS rounds; the
    clock is held at the signing time (a timestamped signature stays in its window)."""
    provider, _, body, headers, at = mention
    from integrations import registry
    from resolver.contract.inbound import route_event
    from resolver.ingress.endpoint import policy_for

    integration = registry.get(provider).integration
    policy = policy_for(settings)
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(loops):
            integration.verify(headers, body, settings, at)
            event = integration.parse(headers, body)
            route_event(integration.routes, event, policy)
        best = min(best, (time.perf_counter() - started) / loops)
    return best * 1e6


def table(tmp: Path, loops: int) -> None:
    """Every provider's mentions, with the test settings (every provider's secret) in force."""
    from integrations import registry
    from tests.integrations.conftest import webhook_vars

    saved = dict(os.environ)
    os.environ.update(webhook_vars(tmp / "verify.db"))
    try:
        settings = registry.settings(env_file=False)
        rows: list[Any] = [
            (found[0], found[1], len(found[2]), per_delivery(settings, found, loops))
            for found in mentions(settings)
        ]
    finally:
        os.environ.clear()
        os.environ.update(saved)
    github = min((r[3] for r in rows if r[0] == "github"), default=None)
    print(f"\nverify + parse + route in process, per mention delivery ({loops} x {ROUNDS} rounds)")
    print(f"  {'provider':11}{'event':34}{'bytes':>7}{'µs':>8}{'of GitHub':>11}")
    for provider, key, size, micros in rows:
        share = f"{micros / github:11.2f}" if github else ""
        print(f"  {provider:11}{key[:33]:34}{size:7}{micros:8.1f}{share}")
