"""A local Linear GraphQL API on loopback: the operations Resolver sends, in Linear's shapes.

    api = LinearAPI()
    ann = api.add_user("Ann Example", display_name="ann")
    api.add_api_key("lin_api_…", ann)                     # `Authorization: <key>`
    app = api.add_app("Resolver")
    api.add_oauth_token("lin_oauth_…", app)               # `Authorization: Bearer <token>`
    issue = api.add_issue("ENG-1778", title="Export fails")
    api.fail("commentCreate", 429)                        # rate limited, with Linear's headers
    api.fail("commentCreate", 503, applied=True)          # commented, and the answer lost
    ... point the client at api.url ...
    api.requests                                          # every operation, in order

Queries are parsed (no fragments) and checked against the subset of Linear's schema in
`graphql`: an unknown field, argument or variable is a GRAPHQL_VALIDATION_FAILED error, as
from Linear. The workspace and its set-up API are in `workspace`, the resolvers in
`resolvers`; their public names are importable from here too.
https://linear.app/developers/graphql
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from integrations.linear.standin.graphql import (
    NO_ARGUMENTS,
    SCHEMA,
    Field,
    GraphQLError,
    Operation,
    Variable,
    check_variables,
    error_document,
    parse_operation,
    project,
    substitute,
    validate,
)
from integrations.linear.standin.oauth import OAUTH_ROUTES, LinearOAuth
from integrations.linear.standin.resolvers import (
    RESOLVERS,
    UUID_V4,
    comment_create,
    comment_update,
    reaction_create,
    resolve_issue,
    resolve_viewer,
)
from integrations.linear.standin.workspace import (
    WORKSPACE,
    Actor,
    LinearComment,
    LinearIssue,
    LinearWorkspace,
    comment_filter,
)
from integrations.standin.server import Fault, StandIn, web_params

__all__ = [
    "NO_ARGUMENTS",
    "RATE_LIMIT",
    "RESOLVERS",
    "SCHEMA",
    "UUID_V4",
    "WORKSPACE",
    "Actor",
    "Field",
    "GraphQLError",
    "LinearAPI",
    "LinearComment",
    "LinearIssue",
    "LinearWorkspace",
    "Operation",
    "Recorded",
    "Variable",
    "check_variables",
    "comment_create",
    "comment_filter",
    "comment_update",
    "error_document",
    "parse_operation",
    "project",
    "reaction_create",
    "reset_headers",
    "resolve_issue",
    "resolve_viewer",
    "validate",
]

RATE_LIMIT = 5000


@dataclass(frozen=True)
class Recorded:
    """One POST as the stand-in received it."""

    headers: dict[str, str]
    body: Any
    operation: str | None
    root_fields: tuple[str, ...]
    status: int

    @property
    def query(self) -> str:
        return str((self.body or {}).get("query", ""))

    @property
    def variables(self) -> dict[str, Any]:
        return dict((self.body or {}).get("variables") or {})


def reset_headers(seconds: float, *, remaining: int = 0) -> dict[str, str]:
    """Linear's request-budget headers; the reset is a UTC epoch in milliseconds."""
    reset = int((time.time() + seconds) * 1000)
    return {
        "X-RateLimit-Requests-Limit": str(RATE_LIMIT),
        "X-RateLimit-Requests-Remaining": str(remaining),
        "X-RateLimit-Requests-Reset": str(reset),
    }


class LinearAPI(LinearWorkspace, StandIn[Recorded]):
    """The workspace served as Linear's GraphQL API; the HTTP server starts in `__init__`."""

    def __init__(self) -> None:
        LinearWorkspace.__init__(self)  # the state first: the server serves it once started
        self.oauth = LinearOAuth()
        StandIn.__init__(self)

    # --- set-up and inspection from tests (the workspace's own are in LinearWorkspace)
    @property
    def url(self) -> str:
        return f"{self.origin}/graphql"

    def fail(
        self,
        root_field: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
        applied: bool = False,
    ) -> None:
        """Answer the next `times` operations on `root_field` (`"commentCreate"`) with `status`.
        A 429 says RATELIMITED, with Linear's headers; other statuses an internal error.
        `applied`: each operation takes effect before the fault answers it (a lost answer)."""
        if not any(root_field in fields for fields in (SCHEMA["Query"], SCHEMA["Mutation"])):
            raise KeyError(f"no such operation: {root_field}")
        if body is None:
            body = (
                error_document("Rate limit exceeded", "RATELIMITED")
                if status == 429
                else error_document("Internal server error", "INTERNAL_SERVER_ERROR")
            )
        if headers is None:
            headers = reset_headers(30) if status == 429 else {}
        self._faults.queue(root_field, Fault(status, times, headers, body, applied))

    def calls(self, root_field: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if root_field in r.root_fields]

    def add_oauth_app(self, client_id: str, secret: str) -> None:
        """An app people may authorize with Linear's OAuth flow (oauth)."""
        self.oauth.apps[client_id] = secret

    def sign_in_as(self, actor: Actor) -> None:
        """Who the browser is signed in to Linear as; they approve every app."""
        self.oauth.signed_in = actor

    # --- request handling (called by the server thread)
    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        web = OAUTH_ROUTES.get(f"{method} {urlsplit(path).path}")
        if web is not None:  # the OAuth flow, authenticated by the client
            with self.lock:
                return web(self, web_params(path, headers, raw), headers)
        with self.lock:
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            status, answer, extra, operation = self._answer(method, path, headers, body)
            roots = tuple(f.name for f in operation.selections) if operation else ()
            name = operation.name if operation else None
            self.requests.append(Recorded(headers, body, name, roots, status))
            return status, answer, {**reset_headers(3600, remaining=RATE_LIMIT - 1), **extra}

    def _answer(
        self, method: str, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str], Operation | None]:
        if method != "POST" or path.split("?")[0] != "/graphql":
            return 404, {"errors": [{"message": "Not found"}]}, {}, None
        if "application/json" not in headers.get("content-type", ""):
            return 400, error_document("Must provide query string.", "BAD_REQUEST"), {}, None
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return 400, error_document("Must provide query string.", "BAD_REQUEST"), {}, None
        operation = None
        try:
            operation = parse_operation(body["query"])
            fault = self._fault(operation)
            if fault is None:
                return 200, {"data": self._run(operation, headers, body)}, {}, operation
        except GraphQLError as error:
            return error.status, error.document(), {}, operation
        if fault.applied:
            # Whatever the operation answered is lost: the fault answers instead.
            with contextlib.suppress(GraphQLError):
                self._run(operation, headers, body)
        return fault.status, fault.body, fault.headers, operation

    def _run(self, operation: Operation, headers: dict[str, str], body: dict[str, Any]) -> Any:
        actor = self._authenticate(headers.get("authorization", ""))
        return self._execute(operation, body.get("variables") or {}, actor)

    def _fault(self, operation: Operation) -> Fault | None:
        for selected in operation.selections:
            fault = self._faults.take(selected.name)
            if fault is not None:
                return fault
        return None

    def _authenticate(self, authorization: str) -> Actor:
        scheme, _, token = authorization.partition(" ")
        actor = (
            self.oauth_tokens.get(token) if scheme == "Bearer" else self.api_keys.get(authorization)
        )
        if actor is None:
            raise GraphQLError(
                "Authentication required, not authenticated", "AUTHENTICATION_ERROR", 401
            )
        return actor

    def _execute(self, operation: Operation, variables: dict[str, Any], actor: Actor) -> Any:
        root = "Mutation" if operation.kind == "mutation" else "Query"
        validate(root, operation.selections)
        check_variables(operation, variables)

        def arguments(selected: Field) -> Any:
            return substitute(selected.arguments, variables, operation.variables)

        data = {}
        for selected in operation.selections:
            resolved = RESOLVERS[selected.name](self, actor, arguments(selected))
            data[selected.key] = project(resolved, selected.selections, arguments)
        return data
