"""The stand-in's resolvers, one per root field of Linear's schema: they check the arguments as
Linear does and read or change the workspace. `RESOLVERS` is the table `LinearAPI` runs."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

from integrations.linear.standin.graphql import GraphQLError
from integrations.linear.standin.webhooks import WEBHOOK_RESOLVERS
from integrations.linear.standin.workspace import Actor, LinearComment, LinearWorkspace

UUID_V4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)


def _input(arguments: dict[str, Any]) -> dict[str, Any]:
    value = arguments.get("input")
    if not isinstance(value, dict):
        raise GraphQLError("Argument Validation Error", "INVALID_INPUT")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise GraphQLError(f"Argument Validation Error: {name} must be a string", "INVALID_INPUT")
    return value


def _chosen_id(api: LinearWorkspace, value: Any) -> str | None:
    """`CommentCreateInput.id`: "The identifier in UUID v4 format. If none is provided, the
    backend will generate one." An id in use is refused (Linear documents no message for it)."""
    if value is None:
        return None
    if not isinstance(value, str) or not UUID_V4.fullmatch(value):
        raise GraphQLError("Argument Validation Error: id must be a UUID v4", "INVALID_INPUT")
    if value in api.comments:
        raise GraphQLError(f"Entity already exists: Comment {value}", "INVALID_INPUT")
    return value


def resolve_issue(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    return api.issue_json(api.visible_issue(actor, arguments.get("id")))


def resolve_viewer(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    return {"id": actor.id, "name": actor.name, "displayName": actor.display_name}


def _payload(comment: LinearComment, api: LinearWorkspace) -> dict[str, Any]:
    return {
        "success": True,
        "lastSyncId": api.next_sync_id(),
        "comment": api.comment_json(comment),
    }


def comment_create(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    given = _input(arguments)
    issue = api.visible_issue(actor, given.get("issueId"))
    body = _text(given.get("body"), "body")
    chosen = _chosen_id(api, given.get("id"))
    parent_id = given.get("parentId")
    if parent_id is not None:
        parent = api.comments.get(parent_id)
        if parent is None or parent.issue_id != issue.id:
            raise GraphQLError("Entity not found: Comment", "INVALID_INPUT")
        if parent.parent_id is not None:
            message = "Argument Validation Error: parent comment must be a top level comment"
            raise GraphQLError(message, "INVALID_INPUT")
    return _payload(api.add_comment(issue, body, actor, parent_id, comment_id=chosen), api)


def comment_update(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    comment = api.comments.get(_text(arguments.get("id"), "id"))
    if comment is None:
        raise GraphQLError("Entity not found: Comment", "INVALID_INPUT")
    api.visible_issue(actor, comment.issue_id)
    if comment.author != actor:
        raise GraphQLError("You can only edit your own comments", "FORBIDDEN")
    comment.body = _text(_input(arguments).get("body"), "body")
    return _payload(comment, api)


def reaction_create(api: LinearWorkspace, actor: Actor, arguments: dict[str, Any]) -> Any:
    given = _input(arguments)
    comment = api.comments.get(_text(given.get("commentId"), "commentId"))
    if comment is None:
        raise GraphQLError("Entity not found: Comment", "INVALID_INPUT")
    emoji = _text(given.get("emoji"), "emoji")
    if (actor.id, emoji) not in comment.reactions:
        comment.reactions.append((actor.id, emoji))
    reaction = {"id": str(uuid.uuid4()), "emoji": emoji}
    return {"success": True, "lastSyncId": api.next_sync_id(), "reaction": reaction}


RESOLVERS: dict[str, Callable[[LinearWorkspace, Actor, dict[str, Any]], Any]] = {
    "issue": resolve_issue,
    "viewer": resolve_viewer,
    "commentCreate": comment_create,
    "commentUpdate": comment_update,
    "reactionCreate": reaction_create,
    **WEBHOOK_RESOLVERS,
}
