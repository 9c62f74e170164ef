"""Linear's GraphQL as the stand-in reads it: the subset of Linear's schema Resolver uses, and
a small reader for operations, variables, arguments and aliases (no fragments). An unknown field,
argument or variable is a GRAPHQL_VALIDATION_FAILED error, as from Linear.
https://linear.app/developers/graphql
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NO_ARGUMENTS: frozenset[str] = frozenset()
# type -> field -> (its type, the arguments it takes). `[T]` is a list, `TConnection` a connection.
SCHEMA: dict[str, dict[str, tuple[str, frozenset[str]]]] = {
    "Query": {
        "issue": ("Issue", frozenset({"id"})),
        "viewer": ("User", NO_ARGUMENTS),
        "webhooks": ("WebhookConnection", frozenset({"first", "after", "includeArchived"})),
    },
    "Mutation": {
        "commentCreate": ("CommentPayload", frozenset({"input"})),
        "commentUpdate": ("CommentPayload", frozenset({"id", "input"})),
        "reactionCreate": ("ReactionPayload", frozenset({"input"})),
        "webhookCreate": ("WebhookPayload", frozenset({"input"})),
        "webhookUpdate": ("WebhookPayload", frozenset({"id", "input"})),
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
    # Webhooks (webhooks): https://linear.app/developers/webhooks
    "WebhookConnection": {"nodes": ("[Webhook]", NO_ARGUMENTS)},
    "Webhook": {
        name: ("String", NO_ARGUMENTS) for name in ("id", "url", "label", "secret", "createdAt")
    }
    | {
        "enabled": ("Boolean", NO_ARGUMENTS),
        "allPublicTeams": ("Boolean", NO_ARGUMENTS),
        "resourceTypes": ("[String]", NO_ARGUMENTS),
    },
    "WebhookPayload": {
        "success": ("Boolean", NO_ARGUMENTS),
        "lastSyncId": ("Float", NO_ARGUMENTS),
        "webhook": ("Webhook", NO_ARGUMENTS),
    },
}


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


def substitute(value: Any, variables: dict[str, Any], declared: dict[str, str]) -> Any:
    if isinstance(value, Variable):
        if value.name not in declared:
            message = f'Variable "${value.name}" is not defined.'
            raise GraphQLError(message, "GRAPHQL_VALIDATION_FAILED", 400)
        return variables.get(value.name)
    if isinstance(value, list):
        return [substitute(v, variables, declared) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables, declared) for k, v in value.items()}
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
