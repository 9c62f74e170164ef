"""A review job's review on Bitbucket Cloud: Bitbucket has no review object, so a review is
its line comments, then "request changes" when the verdict is so, then the summary as one
general comment carrying the hidden tag.
https://developer.atlassian.com/cloud/bitbucket/rest/api-group-pullrequests/

A line comment is `inline: {path, to}` on a line of the head, `{path, from}` on one of the base.
Bitbucket Cloud's API has no suggested-change field: a suggestion is written into the comment,
under "Suggested change", as a fenced `suggestion` block.

Every comment carries the review's tag. A retry first looks for the summary (posted last): when
it is there, the review is whole and nothing is posted again; when not, each line comment
already posted (the same text on the same line) is left as it is, and the rest follows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from integrations.bitbucket.client import BitbucketClient
from integrations.bitbucket.provider import job_client, tagged, with_tag
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import MessageRef
from resolver.contract.review import DiffComment, ReviewPost, suggestion_block
from resolver.contract.triggers import TaskTrigger, number_of, repo_of
from resolver.core.logs import log
from resolver.core.settings import Settings

logger = logging.getLogger(__name__)
SUGGESTED: Final = "Suggested change (apply it by hand: Bitbucket Cloud has no suggestion API):"


def post_review(
    trigger: TaskTrigger, requester_id: int | None, review: ReviewPost, settings: Settings
) -> MessageRef:
    """Post `review` on the trigger's pull request (never an approval)."""
    repo, number = repo_of(trigger), number_of(trigger)
    if not repo or number is None:
        raise PermanentCallbackError("only a pull request can be reviewed")
    client, _, _ = job_client(trigger, requester_id, settings)
    me = str(client.authenticated_user().get("uuid") or "")
    ours = [
        item
        for item in client.comments(repo, number)
        if _uuid(item) == me and tagged(_body(item), review.tag) and not item.get("deleted")
    ]
    summary = next((item for item in ours if not item.get("inline")), None)
    if summary is None:
        posted = {(_body(item), _anchor(item.get("inline") or {})) for item in ours}
        for comment in review.comments:
            body, inline = with_tag(render_comment(comment), review.tag), inline_of(comment)
            if (body, _anchor(inline)) not in posted:
                client.post_line_comment(repo, number, body, inline)
        if review.verdict == "request_changes":
            _request_changes(client, repo, number)
        comment_id = client.post_comment(repo, number, with_tag(review.summary, review.tag))
    else:
        comment_id = int(summary["id"])
    return {"comment_id": comment_id, "tag": review.tag}


def _request_changes(client: BitbucketClient, repo: str, number: int) -> None:
    """ "Changes requested" by the bot; where Bitbucket refuses it (the bot's own pull request,
    say), the summary's words say it alone, and the review is still posted."""
    try:
        client.request_changes(repo, number)
    except PermanentCallbackError as refused:
        fields = {"repo": repo, "number": number, "error": str(refused)}
        log(logger, logging.WARNING, "review.request_changes_refused", **fields)


def render_comment(comment: DiffComment) -> str:
    if comment.suggestion is None:
        return comment.body
    return f"{comment.body}\n\n{SUGGESTED}\n\n{suggestion_block(comment.suggestion)}"


def inline_of(comment: DiffComment) -> dict[str, Any]:
    """Bitbucket's anchor: `to` a line of the head (RIGHT), `from` a line of the base (LEFT)."""
    side = "to" if comment.side == "RIGHT" else "from"
    return {"path": comment.path, side: comment.line}


def _anchor(inline: Mapping[str, Any]) -> tuple[str, str, int | None]:
    side = "to" if inline.get("to") is not None else "from"
    line = inline.get(side)
    return str(inline.get("path") or ""), side, line if isinstance(line, int) else None


def _uuid(item: Mapping[str, Any]) -> str:
    return str((item.get("user") or {}).get("uuid") or "")


def _body(item: Mapping[str, Any]) -> str:
    return str((item.get("content") or {}).get("raw") or "")
