"""The GitHub stand-in's GraphQL endpoint (`POST /graphql`): every operation is validated against
GitHub's published schema (graphql_schema.graphql, cut from `@octokit/graphql-schema` by
make_graphql_schema.py) and run by graphql-core over the stand-in's records.

A review comment that replies to none starts a thread (node id `PRRT_<its id>`); its replies are
the thread's other comments. `resolveReviewThread` marks the thread resolved and records who did.
As on GitHub, the answer is HTTP 200 whether or not it worked: `{"data": …}`, with `errors`
(`message`, `type`, `path`, `locations`) beside or instead of it.
https://docs.github.com/graphql/guides/forming-calls-with-graphql
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from graphql import (
    GraphQLError,
    GraphQLResolveInfo,
    GraphQLSchema,
    build_schema,
    default_field_resolver,
    execute_sync,
    parse,
    validate,
)

from integrations.github.standin.repos import ROLE_RANK
from integrations.github.standin.state import Answer, Comment, Repo, Request

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

SCHEMA_FIXTURE: Final = Path(__file__).with_name("graphql_schema.graphql")
GRAPHQL_ROUTE: Final = "POST /graphql"
PAGE_LIMIT: Final = 100  # GitHub's largest `first` or `last`
THREAD_PREFIX: Final = "PRRT_"
WRITE_RANK: Final = ROLE_RANK["write"]  # resolving a conversation takes write access


@cache
def github_schema() -> GraphQLSchema:
    return build_schema(SCHEMA_FIXTURE.read_text())


class GitHubGraphQLError(Exception):
    """An error GitHub reports in `errors` with a `type` (NOT_FOUND, FORBIDDEN, …)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class GraphQLState:
    """Threads resolved (root comment id -> who), and refusals queued by tests."""

    resolved: dict[int, str] = field(default_factory=dict)
    resolutions: list[tuple[str, str]] = field(default_factory=list)  # thread id, by login
    refusals: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def refuse(self, mutation: str, kind: str, message: str, times: int = 1) -> None:
        """The next `times` calls of `mutation` fail with an error of `kind` (FORBIDDEN, …)."""
        self.refusals.setdefault(mutation, []).extend([(kind, message)] * times)


def operation_problems(body: object) -> list[str]:
    """What in a request body GitHub's schema would refuse (empty when it is valid)."""
    query = body.get("query") if isinstance(body, Mapping) else None
    if not isinstance(query, str):
        return ["A query attribute must be specified and must be a string."]
    try:
        document = parse(query)
    except GraphQLError as error:
        return [error.message]
    return [error.message for error in validate(github_schema(), document)]


def serve_graphql(api: GitHubAPI, request: Request) -> Answer:
    """`POST /graphql`: parse, validate against the schema, then run over the records."""
    body = request.body if isinstance(request.body, Mapping) else {}
    query, variables = body.get("query"), body.get("variables")
    if not isinstance(query, str):
        return 200, {"errors": [{"message": operation_problems(body)[0]}]}
    try:
        document = parse(query)
    except GraphQLError as error:
        return 200, {"errors": [_error_json(error)]}
    invalid = validate(github_schema(), document)
    if invalid:
        return 200, {"errors": [_error_json(error) for error in invalid]}
    result = execute_sync(
        github_schema(),
        document,
        context_value=(api, request.login, _token(request)),
        variable_values=variables if isinstance(variables, dict) else None,
        operation_name=body.get("operationName"),
        field_resolver=_resolve,
    )
    answer: dict[str, Any] = {"data": result.data}
    if result.errors:
        answer["errors"] = [_error_json(error) for error in result.errors]
    return 200, answer


def _token(request: Request) -> str:
    return str(request.headers.get("authorization", "")).partition(" ")[2]


def _error_json(error: GraphQLError) -> dict[str, Any]:
    data: dict[str, Any] = {"message": error.message}
    original = error.original_error
    if isinstance(original, GitHubGraphQLError):
        data["type"] = original.kind
    if error.path:
        data["path"] = list(error.path)
    if error.locations:
        data["locations"] = [{"line": loc.line, "column": loc.column} for loc in error.locations]
    return data


Context = tuple["GitHubAPI", str, str]  # the stand-in, the login and the token it acts as
Resolver = Callable[..., Any]


def _resolve(source: Any, info: GraphQLResolveInfo, **args: Any) -> Any:
    handler = RESOLVERS.get((info.parent_type.name, info.field_name))
    if handler is None:
        return default_field_resolver(source, info, **args)
    return handler(info.context, source, **args)


def _repository(context: Context, _root: Any, owner: str, name: str, **_: Any) -> Any:
    api, _login, token = context
    repo = api.repos.get(f"{owner}/{name}")
    if repo is None or not api.may_reach(token, repo.full_name):
        message = f"Could not resolve to a Repository with the name '{owner}/{name}'."
        raise GitHubGraphQLError("NOT_FOUND", message)
    return {"id": f"R_{repo.id}", "name": name, "nameWithOwner": repo.full_name, "_repo": repo}


def _pull_request(context: Context, repository: Mapping[str, Any], number: int) -> Any:
    api, _, _ = context
    repo: Repo = repository["_repo"]
    pull = next((p for p in api.pulls if (p.repo, p.number) == (repo.full_name, number)), None)
    if pull is None:
        message = f"Could not resolve to a PullRequest with the number of {number}."
        raise GitHubGraphQLError("NOT_FOUND", message)
    return {"id": f"PR_{repo.id}_{number}", "number": number, "title": pull.title, "_repo": repo}


def _roots(api: GitHubAPI, repo: str, number: int) -> list[Comment]:
    comments = sorted(api.review_comments.values(), key=lambda c: c.id)
    return [c for c in comments if (c.repo, c.number) == (repo, number) and c.in_reply_to is None]


def _review_threads(context: Context, pull: Mapping[str, Any], **page: Any) -> Any:
    api, _, _ = context
    roots = _roots(api, pull["_repo"].full_name, pull["number"])
    return _connection("reviewThreads", [_thread_json(api, root) for root in roots], page)


def _thread_json(api: GitHubAPI, root: Comment) -> dict[str, Any]:
    by = api.graphql.resolved.get(root.id)
    return {
        "id": f"{THREAD_PREFIX}{root.id}",
        "isResolved": by is not None,
        "isCollapsed": by is not None,
        "isOutdated": False,
        "resolvedBy": None if by is None else _actor(api, by),
        "path": root.path or "",
        "line": root.line,
        "diffSide": "RIGHT",
        "subjectType": "LINE",
        "viewerCanResolve": by is None,
        "viewerCanUnresolve": by is not None,
        "viewerCanReply": True,
        "_root": root,
    }


def _thread_comments(context: Context, thread: Mapping[str, Any], **page: Any) -> Any:
    api, _, _ = context
    root: Comment = thread["_root"]
    replies = sorted(
        (c for c in api.review_comments.values() if c.in_reply_to == root.id), key=lambda c: c.id
    )
    return _connection("comments", [_comment_json(api, c) for c in [root, *replies]], page)


def _comment_json(api: GitHubAPI, comment: Comment) -> dict[str, Any]:
    return {
        "id": f"PRRC_{comment.id}",
        "databaseId": comment.id,
        "fullDatabaseId": str(comment.id),  # BigInt, which GitHub sends as a string
        "body": comment.body,
        "path": comment.path or "",
        "line": comment.line,
        "diffHunk": comment.diff_hunk or "",
        "author": _actor(api, comment.login),
    }


def _actor(api: GitHubAPI, login: str) -> dict[str, Any]:
    bot = login.endswith("[bot]")
    name = login.removesuffix("[bot]") if bot else login
    user_id = api.user_id(login)
    return {"__typename": "Bot" if bot else "User", "login": name, "databaseId": user_id}


def _connection(name: str, items: list[dict[str, Any]], page: Mapping[str, Any]) -> Any:
    """A cursor connection over `items`, paged as GitHub pages: `first` or `last`, at most 100,
    after or before an opaque cursor."""
    first, last = page.get("first"), page.get("last")
    if first is None and last is None:
        message = (
            "You must provide a `first` or `last` value to properly paginate the "
            f"`{name}` connection."
        )
        raise GitHubGraphQLError("MISSING_PAGINATION_BOUNDARIES", message)
    for bound, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= PAGE_LIMIT:
            message = (
                f"Requesting {value} records on the `{name}` connection exceeds the "
                f"`{bound}` limit of {PAGE_LIMIT} records."
            )
            raise GitHubGraphQLError("EXCESSIVE_PAGINATION", message)
    start = _position(page.get("after"), 0, 1)
    end = _position(page.get("before"), len(items), 0)
    window = list(enumerate(items))[start:end]
    if first is not None:
        window = window[:first]
    if last is not None:
        window = window[max(len(window) - last, 0) :]
    edges = [{"cursor": _cursor(i), "node": item} for i, item in window]
    return {
        "nodes": [item for _, item in window],
        "edges": edges,
        "totalCount": len(items),
        "pageInfo": {
            "hasNextPage": bool(window) and window[-1][0] < len(items) - 1,
            "hasPreviousPage": bool(window) and window[0][0] > 0,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _position(cursor: str | None, default: int, shift: int) -> int:
    if cursor is None:
        return default
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1]) + shift
    except (ValueError, IndexError):
        message = f"`{cursor}` does not appear to be a valid cursor."
        raise GitHubGraphQLError("INVALID_CURSOR_ARGUMENTS", message) from None


def _resolve_review_thread(context: Context, _root: Any, input: Mapping[str, Any]) -> Any:
    api, login, token = context
    thread_id = str(input["threadId"])
    refusals = api.graphql.refusals.get("resolveReviewThread")
    if refusals:
        raise GitHubGraphQLError(*refusals.pop(0))
    root = _thread_root(api, thread_id)
    repo = api.repos.get(root.repo) if root is not None else None
    if root is None or repo is None or not api.may_reach(token, repo.full_name):
        message = f"Could not resolve to a node with the global id of '{thread_id}'"
        raise GitHubGraphQLError("NOT_FOUND", message)
    role = repo.collaborators.get(login, "")
    if not login.endswith("[bot]") and ROLE_RANK.get(role, 0) < WRITE_RANK:
        message = f"{login} does not have the correct permissions to execute `ResolveReviewThread`"
        raise GitHubGraphQLError("FORBIDDEN", message)
    api.graphql.resolved.setdefault(root.id, login)
    api.graphql.resolutions.append((thread_id, login))
    return {"clientMutationId": input.get("clientMutationId"), "thread": _thread_json(api, root)}


def _thread_root(api: GitHubAPI, thread_id: str) -> Comment | None:
    number = thread_id.removeprefix(THREAD_PREFIX)
    if not thread_id.startswith(THREAD_PREFIX) or not number.isdigit():
        return None
    root = api.review_comments.get(int(number))
    return root if root is not None and root.in_reply_to is None else None


RESOLVERS: dict[tuple[str, str], Resolver] = {
    ("Query", "repository"): _repository,
    ("Repository", "pullRequest"): _pull_request,
    ("PullRequest", "reviewThreads"): _review_threads,
    ("PullRequestReviewThread", "comments"): _thread_comments,
    ("Mutation", "resolveReviewThread"): _resolve_review_thread,
}
