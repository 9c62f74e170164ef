"""A realistic mix of GitHub deliveries for bench/ingress: most are events an app subscribed to
its repositories' activity receives and ignores (check runs, statuses, pushes to branches and
to the default branch of a repository where the bot has no open pull request), and a few are
mentions of the bot."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Final

from _load import Signed, sign

ROOT = Path(__file__).resolve().parent.parent
PUSHED_REPO: Final = "Codertocat/Hello-World"
"""The repository of the default-branch push: the bot worked there once (bench/ingress records
an old job on one of its branches), has no open pull request there, and it opted in to
`conflicts: fix`."""
ROUND = ("check_run", "status", "push", "check_run", "default push", "status", "check_run")
ROUND += ("status", "push")
"""The ignored events between two mentions: one delivery in ten is a mention, and one a push to
the default branch."""


def _fixture(path: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / path).read_text())
    return loaded


def _default_push() -> dict[str, Any]:
    """A push of one commit to the default branch, changing no `.resolver/config.yml`."""
    payload = copy.deepcopy(_fixture("integrations/github/fixtures/push__branch.json"))
    branch = payload["repository"]["default_branch"]
    payload.update(ref=f"refs/heads/{branch}", deleted=False, created=False, after="a" * 40)
    payload["commits"] = [{"id": "a" * 40, "added": [], "modified": ["README.md"], "removed": []}]
    return payload


CHECK_RUN: Final = "bench/fixtures/check_run.completed__success.json"
IGNORED: Final = {
    "check_run": ("check_run", lambda: _fixture(CHECK_RUN)),
    "status": ("status", lambda: _fixture("bench/fixtures/status__success.json")),
    "push": ("push", lambda: _fixture("integrations/github/fixtures/push__branch.json")),
    "default push": ("push", _default_push),
}


def ignored(secret: str) -> dict[str, Signed]:
    """One signed delivery of each ignored event, compact JSON as GitHub sends it."""
    return {
        name: sign(json.dumps(payload()).encode(), secret, event)
        for name, (event, payload) in IGNORED.items()
    }


def mix(mentions: list[Signed], secret: str) -> list[Signed]:
    """Each mention followed by a round of nine ignored events (the same four bodies)."""
    deliveries = ignored(secret)
    return [d for mention in mentions for d in (mention, *(deliveries[e] for e in ROUND))]
