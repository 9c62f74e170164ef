"""Keeping the record of the bot's own pull requests from the forge's events: an event that
opens, retargets or closes one is written down here (one statement), whatever the route table
does with the same event. Events about anyone else's pull requests cost no write."""

from __future__ import annotations

import logging
from typing import Final

from resolver.contract.inbound import Integration, MalformedError, Policy, WebhookEvent
from resolver.contract.pulls import PullChange
from resolver.core.logs import log
from resolver.store import bot_pulls
from resolver.store.db import get_engine

logger = logging.getLogger(__name__)


NUMBER_MAX: Final = 2**31 - 1
"""The largest pull request number the record keeps (a four-byte column on PostgreSQL)."""


def pull_change(integration: Integration, event: WebhookEvent, policy: Policy) -> PullChange | None:
    """What the event changes about one of the bot's pull requests; None for any other event.
    Pure: the tracker reads the payload. A number no forge gives is a malformed delivery."""
    tracker = integration.pulls.get(event.key)
    change = None if tracker is None else tracker(event, policy)
    if change is not None and not 0 < change.number <= NUMBER_MAX:
        raise MalformedError(f"pull request number {change.number} out of range")
    return change


def record_pull(provider: str, change: PullChange) -> None:
    """Write the change down in its own transaction."""
    with get_engine().begin() as conn:
        bot_pulls.apply(conn, provider, change)
    state = "open" if change.open else "closed"
    fields = {"repo": change.repo, "number": change.number, "base": change.base, "state": state}
    log(logger, logging.DEBUG, f"webhook.{provider}.bot_pull", **fields)
