"""Jira's outbound side: replies are comments on the ticket a trigger came from.

Jira hosts no repositories, so the provider has a conversation only. The site's token is stored
for the site's URL (`resolver tokens set --provider jira --installation <site>`) as
`email:api_token` (Jira Cloud) or a personal access token (Data Center).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from integrations.jira.client import JiraClient, JiraComment
from integrations.jira.settings import JiraSettings
from integrations.jira.wiki import to_wiki
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import TAG, Comment, History
from resolver.contract.triggers import TaskTrigger, TrackerTicket
from resolver.core.settings import Settings
from resolver.store.secrets import stored_token

HISTORY_LIMIT: Final = 50
# A message's tag, as a comment property `{"tag": "status-12"}`: stored beside the comment,
# never shown in it, kept by edits that send none (Cloud and Data Center alike).
# https://developer.atlassian.com/cloud/jira/platform/rest/v2/api-group-issue-comment-properties/
TAG_PROPERTY: Final = "resolver.message"
FIND_LIMIT: Final = 20


def site_for(trigger: TaskTrigger, settings: Settings) -> str:
    """The trigger's site, else the configured one; without a trailing slash."""
    site = trigger.reach.get("site") or JiraSettings.of(settings).url
    if not site:
        raise PermanentCallbackError("no Jira site for this trigger: set RESOLVER_JIRA_URL")
    return str(site).rstrip("/")


def credential_for(site: str, settings: Settings) -> str:
    """The token stored for `site`, or a permanent error that says how to store one."""
    token = stored_token("jira", installation=site, settings=settings)
    if token is None:
        raise PermanentCallbackError(
            f"no Jira token is stored for {site}: store `email:api_token` (Jira Cloud) or a "
            f'personal access token (Data Center) with `printf %s "$TOKEN" | resolver tokens '
            f"set --provider jira --installation {site}`"
        )
    return token


def _text(mapping: Mapping[str, Any], key: str, what: str) -> str:
    value = mapping.get(key)
    if value is None or value == "":
        raise PermanentCallbackError(f"the {what} has no {key}")
    return str(value)


class JiraConversation:
    """Comments on one Jira issue, written in wiki markup."""

    def __init__(self, client: JiraClient, issue_key: str, settings: Settings) -> None:
        self._client = client
        self._issue_key = issue_key
        self._bot_name = settings.bot_name.lower()
        self._bot_ids = frozenset(
            i.strip() for i in settings.bot_account_ids.split(",") if i.strip()
        )

    def __repr__(self) -> str:
        return f"JiraConversation({self._client.site!r}, {self._issue_key!r})"

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        properties = None if tag is None else {TAG_PROPERTY: {"tag": _checked(tag)}}
        comment_id = self._client.add_comment(self._issue_key, to_wiki(text), properties)
        return self._ref(comment_id)

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        """The newest of the ticket's recent comments that the bot wrote with exactly `tag`;
        comments created before `since` are not looked at."""
        comments = self._client.comments(self._issue_key, FIND_LIMIT, properties=True)
        for comment in reversed(comments):
            if comment.created is not None and comment.created < since:
                return None
            if self._by_bot(comment) and _tag_of(comment) == tag:
                return self._ref(comment.id)
        return None

    def _ref(self, comment_id: str) -> dict[str, Any]:
        return {"issue_key": self._issue_key, "comment_id": comment_id}

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        issue_key = _text(ref, "issue_key", "Jira message reference")
        comment_id = _text(ref, "comment_id", "Jira message reference")
        self._client.edit_comment(issue_key, comment_id, to_wiki(text))

    def acknowledge(self) -> None:
        """Jira's REST API has no reactions on comments: nothing to mark."""

    def history(self) -> History:
        comments = self._client.comments(self._issue_key, HISTORY_LIMIT)
        return History(
            comments=tuple(
                Comment(author=_author(c), body=c.body) for c in comments if not self._by_bot(c)
            )
        )

    def _by_bot(self, comment: JiraComment) -> bool:
        names = {comment.author_display_name, comment.author_name}
        return self._bot_name in {n.lower() for n in names if n} or (
            comment.author_account_id in self._bot_ids
        )


def _checked(tag: str) -> str:
    """`tag` if it is a message tag (`TAG`); a caller's bug otherwise, raised before posting."""
    if TAG.fullmatch(tag) is None:
        raise ValueError(f"not a message tag: {tag!r}")
    return tag


def _tag_of(comment: JiraComment) -> str | None:
    value = comment.properties.get(TAG_PROPERTY)
    tag = value.get("tag") if isinstance(value, Mapping) else None
    return tag if isinstance(tag, str) else None


def _author(comment: JiraComment) -> str:
    return (
        comment.author_display_name or comment.author_name or comment.author_account_id or "unknown"
    )


def conversation_for(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> JiraConversation:
    """The ticket of a Jira trigger, acting with the token stored for its site."""
    site = site_for(trigger, settings)
    if not isinstance(trigger, TrackerTicket) or not trigger.key:
        raise PermanentCallbackError("the Jira trigger has no issue_key")
    issue_key = trigger.key
    return JiraConversation(JiraClient(site, credential_for(site, settings)), issue_key, settings)
