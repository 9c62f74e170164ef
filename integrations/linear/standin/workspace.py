"""The Linear workspace the stand-in serves: users and apps, their credentials, issues and
comments, set up by tests and shown in Linear's JSON shapes. `LinearAPI` serves it over HTTP."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from integrations.linear.standin.graphql import GraphQLError

WORKSPACE = "acme"


@dataclass(frozen=True)
class Actor:
    """A user (API key, OAuth `actor=user`) or an OAuth app acting as itself (`actor=app`)."""

    id: str
    name: str
    display_name: str
    app: bool = False


@dataclass
class LinearComment:
    id: str
    issue_id: str
    body: str
    author: Actor
    created: datetime
    parent_id: str | None = None
    reactions: list[tuple[str, str]] = field(default_factory=list)  # (actor id, emoji)


@dataclass
class LinearIssue:
    id: str
    identifier: str
    title: str
    description: str | None
    readers: frozenset[str] | None = None  # actor ids that may see it; None: everyone


class LinearWorkspace:
    """The workspace's state, its set-up API for tests, and its objects as the API shows them."""

    def __init__(self) -> None:
        self.api_keys: dict[str, Actor] = {}
        self.oauth_tokens: dict[str, Actor] = {}
        self.issues: dict[str, LinearIssue] = {}
        self.comments: dict[str, LinearComment] = {}
        self.webhooks: dict[str, Any] = {}  # id -> linear_webhooks.Webhook
        self.admins: set[str] = set()  # actor ids that may manage webhooks
        self._clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        self._sync_ids = itertools.count(1000)

    # --- set-up from tests
    def add_user(self, name: str, *, display_name: str | None = None) -> Actor:
        return Actor(str(uuid.uuid4()), name, display_name or name.split()[0].lower())

    def add_app(self, name: str) -> Actor:
        return Actor(str(uuid.uuid4()), name, name.lower(), app=True)

    def add_webhook(self, url: str, resource_types: list[str], enabled: bool = True) -> None:
        """A webhook of the workspace, for all public teams."""
        from integrations.linear.standin.webhooks import Webhook

        hook_id = str(uuid.uuid4())
        self.webhooks[hook_id] = Webhook(
            hook_id, url, "Resolver", "", resource_types, None, True, enabled=enabled
        )

    def add_api_key(self, key: str, user: Actor) -> None:
        """A personal API key, sent bare in `Authorization`."""
        self.api_keys[key] = user

    def add_oauth_token(self, token: str, actor: Actor) -> None:
        """An OAuth access token, sent as `Authorization: Bearer`."""
        self.oauth_tokens[token] = actor

    def add_issue(
        self,
        identifier: str,
        title: str = "",
        description: str | None = None,
        readers: frozenset[str] | None = None,
    ) -> LinearIssue:
        issue = LinearIssue(str(uuid.uuid4()), identifier, title, description, readers)
        self.issues[issue.id] = issue
        return issue

    def add_comment(
        self,
        issue: LinearIssue,
        body: str,
        author: Actor,
        parent_id: str | None = None,
        *,
        comment_id: str | None = None,
    ) -> LinearComment:
        """An existing comment, a minute after the one before; `comment_id` as its author chose."""
        self._clock += timedelta(minutes=1)
        chosen = comment_id or str(uuid.uuid4())
        comment = LinearComment(chosen, issue.id, body, author, self._clock, parent_id)
        self.comments[comment.id] = comment
        return comment

    def next_sync_id(self) -> float:
        """The `lastSyncId` a mutation answers with, one higher each time."""
        return float(next(self._sync_ids))

    # --- objects as the API shows them
    def visible_issue(self, actor: Actor, issue_id: Any) -> LinearIssue:
        for issue in self.issues.values():
            if issue_id in (issue.id, issue.identifier) and (
                issue.readers is None or actor.id in issue.readers
            ):
                return issue
        raise GraphQLError("Entity not found: Issue", "INVALID_INPUT")

    def issue_json(self, issue: LinearIssue) -> dict[str, Any]:
        def comments(arguments: dict[str, Any]) -> dict[str, Any]:
            wanted = comment_filter(arguments.get("filter"))
            found = sorted(
                (c for c in self.comments.values() if c.issue_id == issue.id and wanted(c)),
                key=lambda c: c.created,
            )
            first, last = arguments.get("first"), arguments.get("last")
            found = found[:first] if first is not None else found
            found = found[-last:] if last else found
            return {"nodes": [self.comment_json(c) for c in found]}

        return {
            "id": issue.id,
            "identifier": issue.identifier,
            "title": issue.title,
            "description": issue.description,
            "url": f"https://linear.app/{WORKSPACE}/issue/{issue.identifier}",
            "createdAt": "2026-01-05T08:00:00.000Z",
            "comments": comments,
        }

    def comment_json(self, comment: LinearComment) -> dict[str, Any]:
        author = comment.author
        issue = self.issues[comment.issue_id]
        parent = self.comments.get(comment.parent_id or "")
        created = comment.created.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        return {
            "id": comment.id,
            "body": comment.body,
            "url": f"https://linear.app/{WORKSPACE}/issue/{issue.identifier}"
            f"#comment-{comment.id[:8]}",
            "createdAt": created,
            "updatedAt": created,
            "user": {
                "id": author.id,
                "name": author.name,
                "displayName": author.display_name,
                "app": author.app,
            },
            "botActor": (
                {"id": author.id, "name": author.name, "type": "oauthClient"}
                if author.app
                else None
            ),
            "parent": (lambda _: self.comment_json(parent)) if parent else None,
            "issue": lambda _: self.issue_json(issue),
        }


def comment_filter(given: Any) -> Callable[[LinearComment], bool]:
    """A `CommentFilter`, as far as Resolver uses one: `{id: {eq: …}}`."""
    if given is None:
        return lambda _: True
    compared = given.get("id") if isinstance(given, dict) else None
    if not isinstance(compared, dict) or set(given) != {"id"} or set(compared) != {"eq"}:
        message = f"The stand-in filters comments by id.eq only, not by {given!r}"
        raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)
    return lambda comment: comment.id == compared["eq"]
