"""Linear's outbound side: replies are comments on the issue a trigger came from.

Linear hosts no repositories, so the provider has a conversation only. The workspace's token is
stored for its organization id (`resolver tokens set --provider linear --installation <id>`):
a personal API key or an OAuth access token. Linear renders Markdown, so text goes as written.

A tagged comment carries no visible tag: Linear lets the client choose a new comment's id
(`CommentCreateInput.id`, "The identifier in UUID v4 format. If none is provided, the backend
will generate one."), so the id is derived from the tag and the triggering comment, and a
later attempt looks it up.
https://studio.apollographql.com/public/Linear-API/variant/current/schema/reference/inputs/CommentCreateInput
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from integrations.linear.client import LinearClient, LinearComment
from integrations.linear.settings import LinearSettings
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import TAG, Comment, History
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token

HISTORY_LIMIT: Final = 50


def credential_for(organization_id: str, settings: Settings) -> str:
    """The token stored for the workspace, or a permanent error that says how to store one."""
    token = stored_token("linear", installation=organization_id, settings=settings)
    if token is None:
        raise PermanentCallbackError(
            f"no Linear token is stored for workspace {organization_id}: store an API key or "
            f'OAuth token with `printf %s "$TOKEN" | resolver tokens set --provider linear '
            f"--installation {organization_id}`"
        )
    return token


def _text(mapping: Mapping[str, Any], key: str, what: str) -> str:
    value = mapping.get(key)
    if value is None or value == "":
        raise PermanentCallbackError(f"the {what} has no {key}")
    return str(value)


def _optional(mapping: Mapping[str, Any], key: str) -> str | None:
    value = mapping.get(key)
    return str(value) if value else None


def tagged_comment_id(deployment: str, issue_id: str, tag: str, trigger_id: str | None) -> str:
    """The id of the comment tagged `tag` on the issue: the same on every attempt, never the same
    for another tag, issue, trigger (its comment, or when the label was added) or Resolver
    deployment (its public URL), and shaped as the UUID v4 that Linear requires."""
    if TAG.fullmatch(tag) is None:
        raise ValueError(f"not a message tag: {tag!r}")
    # With the trigger in the seed, job and callback ids restarted by a database reset cannot
    # name an old comment. JSON keeps None apart from "".
    seed = json.dumps(["resolver", deployment, issue_id, trigger_id, tag]).encode()
    return str(uuid.UUID(bytes=hashlib.sha256(seed).digest()[:16], version=4))


class LinearConversation:
    """Comments on one Linear issue; replies to a comment stay in its thread."""

    def __init__(
        self,
        client: LinearClient,
        trigger: TaskTrigger,
        settings: Settings,
    ) -> None:
        self._client = client
        context = trigger.part
        self._issue_id = _text(context, "issue_id", "Linear trigger")
        self._comment_id = _optional(context, "comment_id")
        # What tells this trigger from others on the issue: its comment, else when it was labelled.
        self._trigger_id = self._comment_id or _optional(context, "updated_at")
        # Linear threads are one level deep: a reply to a reply goes under the thread's root.
        self._thread_id = _optional(context, "parent_comment_id") or self._comment_id
        self._deployment = settings.public_url
        self._bot_name = settings.bot_name.lower()
        self._bot_ids = frozenset(
            i.strip() for i in settings.bot_account_ids.split(",") if i.strip()
        )

    def __repr__(self) -> str:
        return f"LinearConversation({self._issue_id!r})"

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        chosen = None if tag is None else self._tagged_id(tag)
        comment_id = self._client.create_comment(
            self._issue_id, text, parent_id=self._thread_id, comment_id=chosen
        )
        return {"comment_id": comment_id}

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        """The bot's comment with the id `post` gives a comment tagged `tag`. The id names one
        comment, so `since` bounds nothing more (and Linear's clock might disagree)."""
        found = self._client.issue_comment(self._issue_id, self._tagged_id(tag))
        if found is None or not self._by_bot(found):
            return None
        return {"comment_id": found.id}

    def _tagged_id(self, tag: str) -> str:
        return tagged_comment_id(self._deployment, self._issue_id, tag, self._trigger_id)

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        self._client.update_comment(_text(ref, "comment_id", "Linear message reference"), text)

    def acknowledge(self) -> None:
        """👀 on the triggering comment; a label trigger has none."""
        if self._comment_id is not None:
            self._client.react(self._comment_id, "eyes")

    def history(self) -> History:
        issue = self._client.issue_with_comments(self._issue_id, HISTORY_LIMIT)
        return History(
            comments=tuple(
                Comment(author=_author(c), body=c.body)
                for c in issue.comments
                if not self._by_bot(c)
            )
        )

    def _by_bot(self, comment: LinearComment) -> bool:
        names = {comment.user_name, comment.user_display_name}
        return (
            comment.bot_actor is not None
            or self._bot_name in {n.lower() for n in names if n}
            or comment.user_id in self._bot_ids
        )


def _author(comment: LinearComment) -> str:
    return comment.user_display_name or comment.user_name or comment.user_id or "unknown"


def conversation_for(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> LinearConversation:
    """The issue of a Linear trigger, acting with the token stored for its workspace."""
    token = credential_for(_text(trigger.reach, "organization_id", "Linear trigger"), settings)
    return LinearConversation(
        LinearClient(LinearSettings.of(settings).api_url, token), trigger, settings
    )
