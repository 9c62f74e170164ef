"""A review job's review on Azure Repos: a pull request has no review object, so a review is one
active thread per comment, anchored by its `threadContext`, then the summary as a thread
without one, then, when the verdict is "request changes", the bot's vote "waiting for the
author" (-5) where the bot is one of the pull request's reviewers.
https://learn.microsoft.com/rest/api/azure/devops/git/pull-request-threads/create
https://learn.microsoft.com/rest/api/azure/devops/git/pull-request-reviewers/create-pull-request-reviewer

A comment's context is its file (`filePath`, from the repository's root) and its line on the
head (`rightFileStart`/`rightFileEnd`) or the base (`leftFileStart`/`leftFileEnd`). The API has
no suggested-change field: a suggestion is a `suggestion` block in the comment's text.

Every comment carries the review's hidden tag. A retry looks for the bot's own tagged summary
first (a tag someone else wrote is not the bot's): when it is there, no thread is posted again
(the vote is cast only if it is not cast yet); when not, each line thread the bot already
posted (the same text at the same place) is left as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from integrations.azuredevops.provider import _job_client, by_bot
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import MessageRef, has_hidden_tag, with_hidden_tag
from resolver.contract.review import DiffComment, ReviewPost, suggestion_block
from resolver.contract.triggers import TaskTrigger, number_of, repo_of
from resolver.core.settings import Settings

WAITING_FOR_AUTHOR: Final = -5
"""Azure Repos' vote "waiting for the author": changes requested, never blocking as a rejection
(-10) does. A bot never approves."""


def post_review(
    trigger: TaskTrigger, requester_id: int | None, review: ReviewPost, settings: Settings
) -> MessageRef:
    """Post `review` on the trigger's pull request."""
    repo, number = repo_of(trigger), number_of(trigger)
    if not repo or number is None:
        raise PermanentCallbackError("only a pull request can be reviewed")
    client, _ = _job_client(settings)
    ours = [
        thread
        for thread in client.threads(repo, number)
        if has_hidden_tag(_first(thread).get("content") or "", review.tag)
        and by_bot(_first(thread), settings)
    ]
    summary = next((t for t in ours if not t.get("threadContext")), None)
    if summary is None:
        posted = {(_first(t).get("content"), _place(t.get("threadContext"))) for t in ours}
        for comment in review.comments:
            text, context = (
                with_hidden_tag(render_comment(comment), review.tag),
                context_of(comment),
            )
            if (text, _place(context)) not in posted:
                client.create_thread(repo, number, text, context=context)
        summary = client.create_thread(repo, number, with_hidden_tag(review.summary, review.tag))
    me = str((_first(summary).get("author") or {}).get("id") or "")
    if review.verdict == "request_changes" and me:
        mine = next((r for r in client.reviewers(repo, number) if r.get("id") == me), None)
        if mine is not None and mine.get("vote") != WAITING_FOR_AUTHOR:
            client.vote(repo, number, me, WAITING_FOR_AUTHOR)
    return {"thread": summary.get("id"), "id": _first(summary).get("id"), "tag": review.tag}


def render_comment(comment: DiffComment) -> str:
    if comment.suggestion is None:
        return comment.body
    return f"{comment.body}\n\n{suggestion_block(comment.suggestion)}"


def context_of(comment: DiffComment) -> dict[str, Any]:
    """The thread's place: the file from the repository's root, and the line on its side (the
    head's `right`, the base's `left`), from its first character."""
    side = "right" if comment.side == "RIGHT" else "left"
    position = {"line": comment.line, "offset": 1}
    return {
        "filePath": "/" + comment.path.lstrip("/"),
        f"{side}FileStart": position,
        f"{side}FileEnd": dict(position),
    }


def _place(context: object) -> tuple[str, str, int | None] | None:
    if not isinstance(context, Mapping):
        return None
    side = "right" if context.get("rightFileStart") else "left"
    start = context.get(f"{side}FileStart") or {}
    line = start.get("line") if isinstance(start, Mapping) else None
    return str(context.get("filePath") or ""), side, line if isinstance(line, int) else None


def _first(thread: Mapping[str, Any]) -> Mapping[str, Any]:
    comments = thread.get("comments") or [{}]
    first = comments[0]
    return first if isinstance(first, Mapping) else {}
