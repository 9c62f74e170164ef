"""Bitbucket Cloud's pull request events that start an auto-review (`review: {auto: true}` in the
repository's `.resolver/config.yml`), as Forgejo's do (`integrations/forgejo/review_routes.py`):
a pull request created (`pullrequest:created`, after a mention in its description, which
`routes.py` tries first) or updated (`pullrequest:updated`). Whether the repository opted in,
and what changed since the last review, are the worker's to check; here only what the event
itself rules out: the bot's own pull requests, and ones merged, declined or without an author.

Bitbucket sends `pullrequest:updated` for new commits and for an edit of the title, the
description, the reviewers or the draft flag alike, with the whole pull request and nothing of
what changed (its event payloads page; BCLOUD-21940 asks for the changed fields). New commits
cannot be told from an edit, so the review is keyed on the source commit: an edit at a head
already seen is a duplicate, not a second review. A draft's key is apart, because marking a
draft ready is an `updated` at the same head and must still bring its review.
"""

from __future__ import annotations

from typing import Final

from integrations.bitbucket.events import Account, PullRequestEvent
from resolver.contract.inbound import Policy, Trigger, auto_review
from resolver.contract.triggers import BOT_BRANCH_PREFIX, Repository, ReviewRequest

AUTO_REVIEW_TASK: Final = "Review this pull request."
# A pull request's `state` is OPEN, DRAFT or QUEUED (to merge) while it is open, in the REST
# API description's enum; these are the ended ones.
_ENDED: Final = frozenset({"MERGED", "DECLINED", "SUPERSEDED"})


def on_pull_changed(event: PullRequestEvent, policy: Policy) -> Trigger | None:
    """An auto-review of someone's open pull request at its source commit, for its author;
    an edit at a commit already seen is the same review."""
    pull, author = event.pullrequest, event.pullrequest.author
    source, destination = pull.source, pull.destination
    head_ref = source.branch.name if source and source.branch else None
    head_sha = source.commit.hash if source and source.commit else None
    if author is None or not head_ref or not head_sha or _is_bot(author, policy):
        return None
    if head_ref.startswith(BOT_BRANCH_PREFIX) or pull.state in _ENDED:
        return None
    draft = bool(pull.draft) or pull.state == "DRAFT"
    repo = event.repository
    main = repo.mainbranch.name if repo.mainbranch else None
    subject = ReviewRequest(
        repo=Repository(full_name=repo.full_name, default_branch=main),
        number=pull.id,
        title=pull.title,
        body=pull.description or "",
        url=pull.links.html.href if pull.links and pull.links.html else None,
        head_ref=head_ref,
        head_sha=head_sha,
        base_ref=destination.branch.name if destination and destination.branch else None,
        auto=True,
        draft=draft,
    )
    conversation = f"bitbucket:{repo.full_name}#{pull.id}"
    return auto_review(subject, author.as_sender(), conversation, AUTO_REVIEW_TASK)


def _is_bot(account: Account, policy: Policy) -> bool:
    return account.uuid in policy.bot_account_ids or policy.is_bot_login(account.nickname)
