"""Forgejo's pull request events that start an auto-review (`review: {auto: true}` in the
repository's `.resolver/config.yml`), as GitHub's do (`integrations/github/review_routes.py`): a
pull request opened or reopened (`pull_request`), or given new commits (`pull_request_sync`,
action `synchronized`). Whether the repository opted in, and what changed since the last review,
are the worker's to check; here only what the event itself rules out: the bot's own pull
requests, and ones whose author the event does not name.

Forgejo marks a draft by a work-in-progress title prefix (`WIP:`, `[WIP]` by default); its
payload's `draft` says the same in newer versions. Taking the prefix off sends only
`pull_request.edited`, which is not read here: the review comes with the next commits, or on
request.
"""

from __future__ import annotations

from typing import Any, Final

from integrations.forgejo.events import Envelope
from integrations.forgejo.events import PullRequest as PullPayload
from resolver.contract.inbound import Policy, Route, Trigger, auto_review
from resolver.contract.triggers import BOT_BRANCH_PREFIX, Repository, ReviewRequest

AUTO_REVIEW_TASK: Final = "Review this pull request."
WIP_PREFIXES: Final = ("WIP:", "[WIP]")


class ReviewedPull(PullPayload):
    draft: bool = False


class PullRequestEvent(Envelope):
    action: str
    pull_request: ReviewedPull


def on_pull_request_changed(event: PullRequestEvent, policy: Policy) -> Trigger | None:
    """An auto-review of someone's pull request at its new head, for its author."""
    pull, author = event.pull_request, event.pull_request.user
    head = pull.head
    if author is None or head is None or not head.sha or policy.is_bot_login(author.login):
        return None
    if head.ref.startswith(BOT_BRANCH_PREFIX):
        return None
    repo = event.repository
    draft = pull.draft or pull.title.upper().startswith(WIP_PREFIXES)
    subject = ReviewRequest(
        repo=Repository(
            full_name=repo.full_name, clone_url=repo.clone_url, default_branch=repo.default_branch
        ),
        number=pull.number,
        title=pull.title,
        body=pull.body or "",
        url=pull.html_url,
        head_ref=head.ref,
        head_sha=head.sha,
        base_ref=pull.base.ref if pull.base else None,
        auto=True,
        draft=draft,
    )
    return auto_review(
        subject, author.as_sender(), f"forgejo:{repo.full_name}#{pull.number}", AUTO_REVIEW_TASK
    )


REVIEW_ROUTES: Final[dict[str, Route[Any]]] = {
    "pull_request.opened": Route(PullRequestEvent, on_pull_request_changed),
    "pull_request.reopened": Route(PullRequestEvent, on_pull_request_changed),
    "pull_request_sync.synchronized": Route(PullRequestEvent, on_pull_request_changed),
}
