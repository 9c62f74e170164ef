"""A realistic mix of GitHub deliveries for bench/ingress: most are events an app subscribed to
its repositories' activity receives and ignores (check runs, statuses, pushes), and a few are
mentions of the bot."""

from __future__ import annotations

import json
from pathlib import Path

from _load import Signed, sign

ROOT = Path(__file__).resolve().parent.parent
IGNORED = (
    ("check_run", ROOT / "bench/fixtures/check_run.completed__success.json"),
    ("status", ROOT / "bench/fixtures/status__success.json"),
    ("push", ROOT / "integrations/github/fixtures/push__branch.json"),
)
ROUND = ("check_run", "status", "push") * 3
"""The ignored events between two mentions: one delivery in ten is a mention."""


def ignored(secret: str) -> dict[str, Signed]:
    """One signed delivery of each ignored event, compact JSON as GitHub sends it."""
    return {
        event: sign(json.dumps(json.loads(path.read_text())).encode(), secret, event)
        for event, path in IGNORED
    }


def mix(mentions: list[Signed], secret: str) -> list[Signed]:
    """Each mention followed by a round of nine ignored events (the same three bodies)."""
    deliveries = ignored(secret)
    return [d for mention in mentions for d in (mention, *(deliveries[e] for e in ROUND))]
