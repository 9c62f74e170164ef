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

Queries are parsed (no fragments) and checked against the subset of Linear's schema below:
an unknown field, argument or variable is a GRAPHQL_VALIDATION_FAILED error, as from Linear.
https://linear.app/developers/graphql
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.standin import Fault, StandIn

WORKSPACE = "acme"
NO_ARGUMENTS: frozenset[str] = frozenset()
# type -> field -> (its type, the arguments it takes). `[T]` is a list, `TConnection` a connection.
SCHEMA: dict[str, dict[str, tuple[str, frozenset[str]]]] = {
    "Query": {"issue": ("Issue", frozenset({"id"})), "viewer": ("User", NO_ARGUMENTS)},
    "Mutation": {
        "commentCreate": ("CommentPayload", frozenset({"input"})),
        "commentUpdate": ("CommentPayload", frozenset({"id", "input"})),
        "reactionCreate": ("ReactionPayload", frozenset({"input"})),
    },
    "Issue": {
        name: ("String", NO_ARGUMENTS)
        for name in ("id", "identifier", "title", "description", "url", "createdAt")
    }
    | {
        "comments": (
            "CommentConnection",
            frozenset({"first", "last", "after", "before", "orderBy", "filter"}),
        )
    },
    "CommentConnection": {"nodes": ("[Comment]", NO_ARGUMENTS)},
    "Comment": {
        name: ("String", NO_ARGUMENTS) for name in ("id", "body", "url", "createdAt", "updatedAt")
    }
    | {
        "user": ("User", NO_ARGUMENTS),
        "botActor": ("ActorBot", NO_ARGUMENTS),
        "parent": ("Comment", NO_ARGUMENTS),
        "issue": ("Issue", NO_ARGUMENTS),
    },
    "User": {name: ("String", NO_ARGUMENTS) for name in ("id", "name", "displayName", "email")}
    | {"app": ("Boolean", NO_ARGUMENTS)},
    "ActorBot": {name: ("String", NO_ARGUMENTS) for name in ("id", "name", "type")},
    "CommentPayload": {
        "success": ("Boolean", NO_ARGUMENTS),
        "lastSyncId": ("Float", NO_ARGUMENTS),
        "comment": ("Comment", NO_ARGUMENTS),
    },
    "ReactionPayload": {
        "success": ("Boolean", NO_ARGUMENTS),
        "lastSyncId": ("Float", NO_ARGUMENTS),
        "reaction": ("Reaction", NO_ARGUMENTS),
    },
    "Reaction": {"id": ("String", NO_ARGUMENTS), "emoji": ("String", NO_ARGUMENTS)},
}
RATE_LIMIT = 5000
UUID_V4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)


class GraphQLError(Exception):
    """An error Linear reports in `errors[]`, answered with `status`."""

    def __init__(self, message: str, code: str, status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.status = status

    def document(self) -> dict[str, Any]:
        return error_document(str(self), self.code)


def error_document(message: str, code: str) -> dict[str, Any]:
    """Linear's error answer: `errors[]` with `extensions.code`, and no data."""
    extensions = {"code": code, "userError": code not in ("INTERNAL_SERVER_ERROR",)}
    return {"errors": [{"message": message, "extensions": extensions}], "data": None}


# --- a small GraphQL reader: operations, variables, arguments, aliases (no fragments) -------

_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
_TOKEN = re.compile(
    r"""(?P<skip>[\s,\ufeff]+|\#[^\n]*)
    |(?P<punct>\.\.\.|[!$&():=@\[\]{|}])
    |(?P<name>[_A-Za-z][_0-9A-Za-z]*)
    |(?P<number>"""
    + _NUMBER
    + r""")
    |(?P<string>"(?:\\.|[^"\\\n])*")""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Variable:
    name: str


@dataclass(frozen=True)
class Field:
    name: str
    alias: str | None
    arguments: dict[str, Any]
    selections: tuple[Field, ...]

    @property
    def key(self) -> str:
        return self.alias or self.name


@dataclass(frozen=True)
class Operation:
    kind: str
    name: str | None
    variables: dict[str, str]  # name -> declared type, e.g. "String!"
    selections: tuple[Field, ...]


def _tokens(source: str) -> list[str]:
    tokens, position = [], 0
    while position < len(source):
        found = _TOKEN.match(source, position)
        if found is None:
            raise GraphQLError(
                f"Syntax Error: Unexpected character {source[position]!r}.",
                "GRAPHQL_PARSE_FAILED",
                400,
            )
        if found.lastgroup != "skip":
            tokens.append(found.group())
        position = found.end()
    return tokens


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = _tokens(source)
        self.position = 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            shown = "<EOF>" if token is None else token
            raise GraphQLError(
                f"Syntax Error: Expected {expected or 'a token'}, found {shown}.",
                "GRAPHQL_PARSE_FAILED",
                400,
            )
        self.position += 1
        return token

    def operation(self) -> Operation:
        kind, name, variables = "query", None, {}
        if self.peek() in ("query", "mutation"):
            kind = self.take()
            if self.peek() not in ("(", "{"):
                name = self.take()
            if self.peek() == "(":
                variables = self.variable_definitions()
        operation = Operation(kind, name, variables, self.selection_set())
        if self.peek() is not None:
            raise GraphQLError("Only one operation is supported", "GRAPHQL_PARSE_FAILED", 400)
        return operation

    def variable_definitions(self) -> dict[str, str]:
        definitions = {}
        self.take("(")
        while self.peek() != ")":
            self.take("$")
            name = self.take()
            self.take(":")
            definitions[name] = self.type_reference()
            if self.peek() == "=":
                self.take("=")
                self.value()
        self.take(")")
        return definitions

    def type_reference(self) -> str:
        if self.peek() == "[":
            self.take("[")
            text = f"[{self.type_reference()}]"
            self.take("]")
        else:
            text = self.take()
        if self.peek() == "!":
            text += self.take("!")
        return text

    def selection_set(self) -> tuple[Field, ...]:
        self.take("{")
        fields = []
        while self.peek() != "}":
            if self.peek() == "...":
                raise GraphQLError("Fragments are not supported here", "GRAPHQL_PARSE_FAILED", 400)
            fields.append(self.field())
        self.take("}")
        return tuple(fields)

    def field(self) -> Field:
        name, alias = self.take(), None
        if self.peek() == ":":
            self.take(":")
            alias, name = name, self.take()
        arguments: dict[str, Any] = {}
        if self.peek() == "(":
            self.take("(")
            while self.peek() != ")":
                key = self.take()
                self.take(":")
                arguments[key] = self.value()
            self.take(")")
        selections = self.selection_set() if self.peek() == "{" else ()
        return Field(name, alias, arguments, selections)

    def value(self) -> Any:
        token = self.take()
        if token == "$":
            return Variable(self.take())
        if token == "[":
            items = []
            while self.peek() != "]":
                items.append(self.value())
            self.take("]")
            return items
        if token == "{":
            fields = {}
            while self.peek() != "}":
                key = self.take()
                self.take(":")
                fields[key] = self.value()
            self.take("}")
            return fields
        if token.startswith('"'):
            return json.loads(token)
        if re.fullmatch(r"-?\d+", token):
            return int(token)
        if re.fullmatch(_NUMBER, token):
            return float(token)
        return {"true": True, "false": False, "null": None}.get(token, token)  # enums stay names


def parse_operation(query: str) -> Operation:
    return _Parser(query).operation()


def _substitute(value: Any, variables: dict[str, Any], declared: dict[str, str]) -> Any:
    if isinstance(value, Variable):
        if value.name not in declared:
            message = f'Variable "${value.name}" is not defined.'
            raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)
        return variables.get(value.name)
    if isinstance(value, list):
        return [_substitute(v, variables, declared) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, variables, declared) for k, v in value.items()}
    return value


def check_variables(operation: Operation, variables: dict[str, Any]) -> None:
    for name, declared in operation.variables.items():
        if declared.endswith("!") and variables.get(name) is None:
            message = f'Variable "${name}" of required type "{declared}" was not provided.'
            raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)


def validate(parent: str, fields: tuple[Field, ...]) -> None:
    """Every field and argument exists on its type; objects have selections, scalars none."""
    for selected in fields:
        known = SCHEMA[parent].get(selected.name)
        if known is None:
            message = f'Cannot query field "{selected.name}" on type "{parent}".'
            raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)
        kind, arguments = known
        for argument in set(selected.arguments) - arguments:
            message = f'Unknown argument "{argument}" on field "{parent}.{selected.name}".'
            raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)
        inner = kind.strip("[]")
        if (inner in SCHEMA) != bool(selected.selections):
            message = f'Field "{selected.name}" of type "{kind}" has a wrong selection.'
            raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)
        if inner in SCHEMA:
            validate(inner, selected.selections)


def project(value: Any, fields: tuple[Field, ...], arguments: Callable[[Field], Any]) -> Any:
    """The selected fields of `value` (a dict whose lazy fields are callables of the arguments)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [project(item, fields, arguments) for item in value]
    answer = {}
    for selected in fields:
        found = value.get(selected.name)
        if callable(found):
            found = found(arguments(selected))
        if selected.selections:
            found = project(found, selected.selections, arguments)
        answer[selected.key] = found
    return answer


# --- the workspace -----------------------------------------------------------------------


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


class LinearAPI(StandIn[Recorded]):
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`."""

    def __init__(self) -> None:
        self.api_keys: dict[str, Actor] = {}
        self.oauth_tokens: dict[str, Actor] = {}
        self.issues: dict[str, LinearIssue] = {}
        self.comments: dict[str, LinearComment] = {}
        self._clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        self._sync_ids = itertools.count(1000)
        super().__init__()

    # --- set-up and inspection from tests
    @property
    def url(self) -> str:
        return f"{self.origin}/graphql"

    def add_user(self, name: str, *, display_name: str | None = None) -> Actor:
        return Actor(str(uuid.uuid4()), name, display_name or name.split()[0].lower())

    def add_app(self, name: str) -> Actor:
        return Actor(str(uuid.uuid4()), name, name.lower(), app=True)

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

    # --- request handling (called by the server thread)
    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
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
            return _substitute(selected.arguments, variables, operation.variables)

        data = {}
        for selected in operation.selections:
            resolved = RESOLVERS[selected.name](self, actor, arguments(selected))
            data[selected.key] = project(resolved, selected.selections, arguments)
        return data

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


# --- resolvers, one per root field ---------------------------------------------------------


def _input(arguments: dict[str, Any]) -> dict[str, Any]:
    value = arguments.get("input")
    if not isinstance(value, dict):
        raise GraphQLError("Argument Validation Error", "INVALID_INPUT")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise GraphQLError(f"Argument Validation Error: {name} must be a string", "INVALID_INPUT")
    return value


def _chosen_id(api: LinearAPI, value: Any) -> str | None:
    """`CommentCreateInput.id`: "The identifier in UUID v4 format. If none is provided, the
    backend will generate one." An id in use is refused (Linear documents no message for it)."""
    if value is None:
        return None
    if not isinstance(value, str) or not UUID_V4.fullmatch(value):
        raise GraphQLError("Argument Validation Error: id must be a UUID v4", "INVALID_INPUT")
    if value in api.comments:
        raise GraphQLError(f"Entity already exists: Comment {value}", "INVALID_INPUT")
    return value


def comment_filter(given: Any) -> Callable[[LinearComment], bool]:
    """A `CommentFilter`, as far as Resolver uses one: `{id: {eq: …}}`."""
    if given is None:
        return lambda _: True
    compared = given.get("id") if isinstance(given, dict) else None
    if not isinstance(compared, dict) or set(given) != {"id"} or set(compared) != {"eq"}:
        message = f"The stand-in filters comments by id.eq only, not by {given!r}"
        raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)
    return lambda comment: comment.id == compared["eq"]


def resolve_issue(api: LinearAPI, actor: Actor, arguments: dict[str, Any]) -> Any:
    return api.issue_json(api.visible_issue(actor, arguments.get("id")))


def resolve_viewer(api: LinearAPI, actor: Actor, arguments: dict[str, Any]) -> Any:
    return {"id": actor.id, "name": actor.name, "displayName": actor.display_name}


def _payload(comment: LinearComment, api: LinearAPI) -> dict[str, Any]:
    return {
        "success": True,
        "lastSyncId": float(next(api._sync_ids)),
        "comment": api.comment_json(comment),
    }


def comment_create(api: LinearAPI, actor: Actor, arguments: dict[str, Any]) -> Any:
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


def comment_update(api: LinearAPI, actor: Actor, arguments: dict[str, Any]) -> Any:
    comment = api.comments.get(_text(arguments.get("id"), "id"))
    if comment is None:
        raise GraphQLError("Entity not found: Comment", "INVALID_INPUT")
    api.visible_issue(actor, comment.issue_id)
    if comment.author != actor:
        raise GraphQLError("You can only edit your own comments", "FORBIDDEN")
    comment.body = _text(_input(arguments).get("body"), "body")
    return _payload(comment, api)


def reaction_create(api: LinearAPI, actor: Actor, arguments: dict[str, Any]) -> Any:
    given = _input(arguments)
    comment = api.comments.get(_text(given.get("commentId"), "commentId"))
    if comment is None:
        raise GraphQLError("Entity not found: Comment", "INVALID_INPUT")
    emoji = _text(given.get("emoji"), "emoji")
    if (actor.id, emoji) not in comment.reactions:
        comment.reactions.append((actor.id, emoji))
    reaction = {"id": str(uuid.uuid4()), "emoji": emoji}
    return {"success": True, "lastSyncId": float(next(api._sync_ids)), "reaction": reaction}


RESOLVERS: dict[str, Callable[[LinearAPI, Actor, dict[str, Any]], Any]] = {
    "issue": resolve_issue,
    "viewer": resolve_viewer,
    "commentCreate": comment_create,
    "commentUpdate": comment_update,
    "reactionCreate": reaction_create,
}
