"""The bot's own pull requests, as GitHub's `pull_request` events tell of them: opened,
reopened, retargeted (an edit that changes the base), closed or merged. Pure: intake records
what these return (`resolver.ingress.pulls`), apart from whatever the route table does with the
same event."""

from __future__ import annotations

from typing import Final

from integrations.github.events import Envelope
from integrations.github.events import PullRequest as PullRequestPayload
from resolver.contract.inbound import Policy, WebhookEvent, validated
from resolver.contract.pulls import PullChange, PullTracker
from resolver.contract.triggers import BOT_BRANCH_PREFIX

OPEN_ACTIONS: Final = frozenset({"opened", "reopened", "edited", "synchronize"})


class PullEvent(Envelope):
    """https://docs.github.com/webhooks/webhook-events-and-payloads#pull_request"""

    action: str
    pull_request: PullRequestPayload


def track_pull(event: WebhookEvent, policy: Policy) -> PullChange | None:
    """The change to one of the bot's pull requests (its author the bot, its head one of the
    bot's branches); None for anyone else's."""
    payload = validated(PullEvent, event)
    pull = payload.pull_request
    author = pull.user.login if pull.user else None
    if pull.head is None or pull.base is None or not policy.is_bot_login(author):
        return None
    if not pull.head.ref.startswith(BOT_BRANCH_PREFIX):
        return None
    repo = payload.repository.full_name
    is_open = payload.action in OPEN_ACTIONS
    return PullChange(repo, pull.number, pull.head.ref, pull.base.ref, open=is_open)


PULLS: Final[dict[str, PullTracker]] = {
    f"pull_request.{action}": track_pull for action in (*sorted(OPEN_ACTIONS), "closed")
}
