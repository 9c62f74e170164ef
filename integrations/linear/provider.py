"""Linear's outbound side: replies are comments on the issue a trigger came from.

Linear hosts no repositories, so the provider has a conversation only. The workspace's token is
stored for its organization id (`resolver tokens set --provider linear --installation <id>`):
a personal API key or an OAuth access token. Linear renders Markdown, so text goes as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from integrations.linear.client import LinearClient, LinearComment
from resolver.agent.task import Comment
from resolver.callback_errors import PermanentCallbackError
from resolver.config import Settings, get_settings
from resolver.credentials import stored_token
from resolver.providers import History, Provider, TriggerContext, register_provider

HISTORY_LIMIT: Final = 50


def credential_for(organization_id: str) -> str:
    """The token stored for the workspace, or a permanent error that says how to store one."""
    token = stored_token("linear", installation=organization_id)
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


class LinearConversation:
    """Comments on one Linear issue; replies to a comment stay in its thread."""

    def __init__(
        self,
        client: LinearClient,
        context: TriggerContext,
        settings: Settings,
    ) -> None:
        self._client = client
        self._issue_id = _text(context, "issue_id", "Linear trigger")
        self._comment_id = _optional(context, "comment_id")
        # Linear threads are one level deep: a reply to a reply goes under the thread's root.
        self._thread_id = _optional(context, "parent_comment_id") or self._comment_id
        self._bot_name = settings.bot_name.lower()
        self._bot_ids = frozenset(
            i.strip() for i in settings.bot_account_ids.split(",") if i.strip()
        )

    def __repr__(self) -> str:
        return f"LinearConversation({self._issue_id!r})"

    def post(self, text: str) -> dict[str, Any]:
        comment_id = self._client.create_comment(self._issue_id, text, parent_id=self._thread_id)
        return {"comment_id": comment_id}

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


def conversation_for(context: TriggerContext, requester_id: int | None) -> LinearConversation:
    """The issue of a Linear trigger, acting with the token stored for its workspace."""
    settings = get_settings()
    token = credential_for(_text(context, "organization_id", "Linear trigger"))
    return LinearConversation(LinearClient(settings.linear_api_url, token), context, settings)


register_provider(Provider(name="linear", conversation=conversation_for))
