"""GitHub's pull request events that start an auto-review (`review: {auto: true}` in the
repository's `.resolver/config.yml`): a pull request opened, marked ready for review, or given
new commits. Whether the repository opted in, and what changed since the last review, are the
worker's to check; here only what the event itself rules out: the bot's own pull requests.

Kept apart from `routes.py`, whose table takes these routes in, so that other handlers of the
same events stay separate from the review's.
"""

from __future__ import annotations

from typing import Any, Final

from integrations.github.events import Envelope
from integrations.github.events import PullRequest as PullRequestPayload
from resolver.contract.inbound import Policy, Route, Trigger, auto_review
from resolver.contract.triggers import BOT_BRANCH_PREFIX, Repository, ReviewRequest

AUTO_REVIEW_TASK: Final = "Review this pull request."


class ReviewedPull(PullRequestPayload):
    draft: bool = False


class PullRequestEvent(Envelope):
    action: str
    pull_request: ReviewedPull


def on_pull_request_changed(event: PullRequestEvent, policy: Policy) -> Trigger | None:
    """An auto-review of someone's pull request at its new head, for its author."""
    pull, author = event.pull_request, event.pull_request.user
    head = pull.head
    if author is None or head is None or policy.is_bot_login(author.login):
        return None
    if head.ref.startswith(BOT_BRANCH_PREFIX):
        return None
    repo = event.repository
    subject = ReviewRequest(
        repo=Repository(
            full_name=repo.full_name, clone_url=repo.clone_url, default_branch=repo.default_branch
        ),
        reach={"installation_id": event.installation.id if event.installation else None},
        number=pull.number,
        title=pull.title,
        body=pull.body or "",
        url=pull.html_url,
        head_ref=head.ref,
        head_sha=head.sha,
        base_ref=pull.base.ref if pull.base else None,
        auto=True,
        draft=pull.draft,
    )
    return auto_review(
        subject, author.as_sender(), f"github:{repo.full_name}#{pull.number}", AUTO_REVIEW_TASK
    )


REVIEW_ROUTES: Final[dict[str, Route[Any]]] = {
    "pull_request.opened": Route(PullRequestEvent, on_pull_request_changed),
    "pull_request.ready_for_review": Route(PullRequestEvent, on_pull_request_changed),
    "pull_request.synchronize": Route(PullRequestEvent, on_pull_request_changed),
}
