"""Linear's GraphQL API over httpx: the calls Resolver makes back to Linear.

User text travels only in GraphQL variables, never in the query. Every failure leaves as a
`TransientCallbackError` (retry later) or a `PermanentCallbackError` (tell the user): `_run` and
`_answer` read what failed and contract's `HttpErrors` decides. Linear reports most errors in
`errors[].extensions.code`, often with HTTP 200.
https://linear.app/developers/graphql
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import httpx

from integrations.toolkit.answers import fields, items, read, text
from integrations.toolkit.http import bounded_client
from integrations.toolkit.limits import Limits
from resolver.contract.errors import HttpErrors, PermanentCallbackError, parse_retry_after
from resolver.core.logs import redact, register_secret

T = TypeVar("T")
TIMEOUT_SECONDS: Final = 30.0
MESSAGE_LIMIT: Final = 300
API_KEY_PREFIX: Final = "lin_api_"  # personal API keys go bare; OAuth tokens as Bearer
ERRORS: Final = HttpErrors("Linear", refused=" (the stored Linear token was refused)")
TRANSIENT_CODES: Final = frozenset({"RATELIMITED", "INTERNAL_SERVER_ERROR"})
_RESET: Final = re.compile(r"^x-ratelimit-(?P<budget>[a-z-]+)-reset$")

COMMENT_CREATE: Final = """
mutation CommentCreate($input: CommentCreateInput!) {
  commentCreate(input: $input) { success comment { id url } }
}"""
COMMENT_UPDATE: Final = """
mutation CommentUpdate($id: String!, $input: CommentUpdateInput!) {
  commentUpdate(id: $id, input: $input) { success comment { id } }
}"""
REACTION_CREATE: Final = """
mutation ReactionCreate($input: ReactionCreateInput!) {
  reactionCreate(input: $input) { success }
}"""
COMMENT_FIELDS: Final = """
        id body createdAt
        user { id name displayName }
        botActor { id name }
        parent { id }"""
ISSUE_WITH_COMMENTS: Final = f"""
query IssueWithComments($id: String!, $last: Int!) {{
  issue(id: $id) {{
    id identifier title description url
    comments(last: $last) {{
      nodes {{{COMMENT_FIELDS}
      }}
    }}
  }}
}}"""
ISSUE_COMMENT: Final = f"""
query IssueComment($id: String!, $commentId: ID!) {{
  issue(id: $id) {{
    comments(filter: {{ id: {{ eq: $commentId }} }}, first: 1) {{
      nodes {{{COMMENT_FIELDS}
      }}
    }}
  }}
}}"""


@dataclass(frozen=True)
class LinearComment:
    id: str
    body: str
    created_at: str
    user_id: str | None
    user_name: str | None
    user_display_name: str | None
    bot_actor: str | None  # the app's name when an integration wrote it
    parent_id: str | None


@dataclass(frozen=True)
class LinearIssue:
    id: str
    identifier: str
    title: str
    description: str | None
    url: str | None
    comments: tuple[LinearComment, ...]


def authorization(token: str) -> str:
    """Linear's header value: a personal API key as it is, an OAuth access token as Bearer."""
    if token.startswith((API_KEY_PREFIX, "Bearer ")):
        return token
    return f"Bearer {token}"


class LinearClient:
    """The GraphQL operations Resolver sends, with one API key or OAuth token."""

    def __init__(self, api_url: str, token: str, timeout: float = TIMEOUT_SECONDS) -> None:
        register_secret(token, passing=True)
        self.api_url = api_url
        self.timeout = timeout
        self._authorization = authorization(token)

    def __repr__(self) -> str:
        return f"LinearClient({self.api_url!r})"

    def create_comment(
        self,
        issue_id: str,
        body: str,
        parent_id: str | None = None,
        comment_id: str | None = None,
    ) -> str:
        """Comment on the issue, in the thread of `parent_id` if given; returns the comment id.
        `comment_id` (a UUID v4) chooses the new comment's id, else Linear makes one up."""
        given = {"issueId": issue_id, "body": body}
        if parent_id is not None:
            given["parentId"] = parent_id
        if comment_id is not None:
            given["id"] = comment_id
        return self._run("CommentCreate", COMMENT_CREATE, {"input": given}, _created_id)

    def update_comment(self, comment_id: str, body: str) -> None:
        """Replace the body of a comment."""
        variables = {"id": comment_id, "input": {"body": body}}
        self._run("CommentUpdate", COMMENT_UPDATE, variables, _done("commentUpdate"))

    def react(self, comment_id: str, emoji: str = "eyes") -> None:
        """Put an emoji reaction (by name) on a comment."""
        variables = {"input": {"commentId": comment_id, "emoji": emoji}}
        self._run("ReactionCreate", REACTION_CREATE, variables, _done("reactionCreate"))

    def issue_with_comments(self, issue_id: str, limit: int) -> LinearIssue:
        """The issue (by id or identifier) with its `limit` latest comments, oldest first."""
        variables = {"id": issue_id, "last": limit}
        return self._run(
            "IssueWithComments",
            ISSUE_WITH_COMMENTS,
            variables,
            lambda data: _linear_issue(_issue(data, issue_id)),
        )

    def issue_comment(self, issue_id: str, comment_id: str) -> LinearComment | None:
        """The issue's comment with this id, or None when the issue has none."""
        variables = {"id": issue_id, "commentId": comment_id}
        return self._run(
            "IssueComment",
            ISSUE_COMMENT,
            variables,
            lambda data: next((_comment(node) for node in _nodes(_issue(data, issue_id))), None),
        )

    def query(self, name: str, query: str, timeout: float | None = None) -> dict[str, Any]:
        """A read without variables (the preflight's), with its own timeout; its `data`."""
        return self._run(name, query, {}, fields, timeout)

    def _run(
        self,
        name: str,
        query: str,
        variables: Mapping[str, Any],
        shape: Callable[[dict[str, Any]], T],
        timeout: float | None = None,
    ) -> T:
        """The operation's `data` as `shape` reads it (a wrong shape is an unusable answer)."""
        payload = {"query": query, "variables": variables, "operationName": name}
        headers = {"Authorization": self._authorization, "User-Agent": "Resolver"}
        seconds = self.timeout if timeout is None else timeout
        try:
            with bounded_client(Limits(seconds=seconds)) as http:
                response = http.post(self.api_url, json=payload, headers=headers)
        except httpx.TimeoutException:
            raise ERRORS.timed_out(name) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as error:
            raise ERRORS.unusable_url(name, error) from None
        except httpx.TransportError as error:
            raise ERRORS.unreachable(name, error) from None
        except httpx.DecodingError as error:
            raise ERRORS.unusable_answer(name, error) from None
        return read(ERRORS, name, lambda: _answer(name, response), shape)


def _answer(name: str, response: httpx.Response) -> dict[str, Any]:
    """The operation's `data`, or the one error that says what went wrong."""
    status = response.status_code
    body = _json(response)
    listed = body.get("errors")
    errors: list[Any] = listed if isinstance(listed, list) else []
    codes = {_code(error) for error in errors}
    data = body.get("data")
    if not errors and status < 400 and isinstance(data, dict):
        return data
    raise ERRORS.answered(
        name,
        status,
        _detail(response, errors),
        retry_after=retry_after(response.headers),
        transient=bool(codes & TRANSIENT_CODES),
        refused="AUTHENTICATION_ERROR" in codes,
    )


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _code(error: Any) -> str | None:
    extensions = error.get("extensions") if isinstance(error, dict) else None
    code = extensions.get("code") if isinstance(extensions, dict) else None
    return code if isinstance(code, str) else None


def _detail(response: httpx.Response, errors: list[Any]) -> str:
    """The first error's message and code, redacted and shortened."""
    if not errors:
        return response.reason_phrase or "no data in the answer"
    first = errors[0] if isinstance(errors[0], dict) else {}
    text = str(first.get("message") or "no message")
    code = _code(first)
    return redact(f"{text} ({code})" if code else text)[:MESSAGE_LIMIT]


def retry_after(headers: Mapping[str, str]) -> float | None:
    """`Retry-After`, else when the exhausted budget refills: Linear's `X-RateLimit-*-Reset`
    headers hold a UTC epoch in milliseconds."""
    lowered = {name.lower(): value.strip() for name, value in headers.items()}
    wait = parse_retry_after(lowered.get("retry-after"))
    if wait is not None:
        return wait
    exhausted = [
        float(value)
        for name, value in lowered.items()
        if (found := _RESET.match(name))
        and value.isascii()
        and value.isdigit()
        and lowered.get(f"x-ratelimit-{found.group('budget')}-remaining") == "0"
    ]
    latest = max(exhausted, default=None)
    if latest is None:
        return None
    seconds = latest / 1000 if latest > 1e11 else latest  # tolerate epoch seconds
    return max(0.0, seconds - time.time())


def _succeeded(data: Mapping[str, Any], field: str) -> dict[str, Any]:
    payload = data.get(field)
    if not isinstance(payload, dict) or not payload.get("success"):
        raise PermanentCallbackError(f"Linear did not carry out {field}")
    return payload


def _done(field: str) -> Callable[[Mapping[str, Any]], object]:
    return lambda data: _succeeded(data, field)


def _created_id(data: Mapping[str, Any]) -> str:
    return text(fields(_succeeded(data, "commentCreate")["comment"])["id"])


def _linear_issue(issue: Mapping[str, Any]) -> LinearIssue:
    comments = sorted((_comment(node) for node in _nodes(issue)), key=lambda c: c.created_at)
    return LinearIssue(
        id=text(issue["id"]),
        identifier=str(issue.get("identifier") or ""),
        title=str(issue.get("title") or ""),
        description=issue.get("description"),
        url=issue.get("url"),
        comments=tuple(comments),
    )


def _issue(data: Mapping[str, Any], issue_id: str) -> dict[str, Any]:
    issue = data.get("issue")
    if not isinstance(issue, dict):
        raise PermanentCallbackError(f"Linear has no issue {issue_id}")
    return issue


def _nodes(issue: Mapping[str, Any]) -> list[dict[str, Any]]:
    nodes = fields(issue.get("comments") or {}).get("nodes")
    return items(nodes) if isinstance(nodes, list) else []


def _comment(node: Mapping[str, Any]) -> LinearComment:
    user = node.get("user") or {}
    bot = node.get("botActor") or {}
    parent = node.get("parent") or {}
    return LinearComment(
        id=text(node.get("id")),
        body=str(node.get("body") or ""),
        created_at=str(node.get("createdAt") or ""),
        user_id=user.get("id"),
        user_name=user.get("name"),
        user_display_name=user.get("displayName"),
        bot_actor=(bot.get("name") or "app") if node.get("botActor") else None,
        parent_id=parent.get("id"),
    )
