"""A review job's review on GitLab: a thread on each commented line of the merge request's
diff (a position on its diff refs, a suggestion where there is one), then the summary as a
note. https://docs.gitlab.com/api/discussions/#create-a-new-thread-in-the-merge-request-diff

GitLab has no request-changes state a note can set: the summary says so in words. A retry
finds the summary it posted already (its hidden tag) and posts nothing again; the threads of
a try that failed before its summary are skipped when the same text is already there.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final

from integrations.gitlab.provider import _client, _iid, _project, conversation_for
from resolver.contract.outbound import MessageRef
from resolver.contract.review import DiffComment, ReviewPost, suggestion_block
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings

LOOK_BACK: Final = timedelta(days=2)


def post_review(
    trigger: TaskTrigger, requester_id: int | None, review: ReviewPost, settings: Settings
) -> MessageRef:
    """Post `review` on the trigger's merge request."""
    project, iid = _project(trigger), _iid(trigger)
    conversation = conversation_for(trigger, requester_id, settings)
    found = conversation.find(review.tag, datetime.now(UTC) - LOOK_BACK)
    if found is not None:
        return found
    client, _, _ = _client(requester_id, settings)
    there = {t.notes[0].body for t in client.diff_threads(project, iid) if t.notes}
    for comment in review.comments:
        body = render_body(comment)
        if body not in there:
            client.start_diff_discussion(project, iid, body, render_position(review, comment))
    return conversation.post(review.summary, tag=review.tag)


def render_body(comment: DiffComment) -> str:
    if comment.suggestion is None:
        return comment.body
    return f"{comment.body}\n\n{suggestion_block(comment.suggestion)}"


def render_position(review: ReviewPost, comment: DiffComment) -> dict[str, Any]:
    """GitLab's text position: the diff refs, both paths, and the line's old and new numbers
    (an unchanged line has both; an added one only the new, a removed one only the old)."""
    position: dict[str, Any] = {
        "position_type": "text",
        "base_sha": review.base_sha,
        "start_sha": review.start_sha,
        "head_sha": review.head_sha,
        "new_path": comment.path,
        "old_path": comment.old_path or comment.path,
    }
    if comment.new_line is not None:
        position["new_line"] = comment.new_line
    if comment.old_line is not None:
        position["old_line"] = comment.old_line
    return position
