"""Conformance with Bitbucket Cloud's published API description (openapi_subset.json, made by
make_openapi_subset): which operation a request is for, what in a request the description
lacks, and which keys of an answer or a webhook payload its schema lacks. A value whose `type`
names a schema that extends the expected one (`user` for an `account`) is checked against it."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any, Final

SUBSET = Path(__file__).with_name("openapi_subset.json")
# Bitbucket's paging parameters, the same on every listing (the REST reference's "Pagination"
# page), which the description does not repeat on each operation; `next` links carry them.
PAGING: Final = frozenset({"page", "pagelen"})


@cache
def description() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SUBSET.read_text())
    return data


def operations() -> dict[str, dict[str, Any]]:
    """`"METHOD /template"` -> its `query` and `body` names and the schema it `returns`."""
    found: dict[str, dict[str, Any]] = description()["operations"]
    return found


def definitions() -> dict[str, dict[str, Any]]:
    """A schema's `properties` (-> a schema name, `[name]` for a list, or a JSON type) and the
    schemas it extends (`bases`)."""
    found: dict[str, dict[str, Any]] = description()["definitions"]
    return found


def template_regex(template: str) -> re.Pattern[str]:
    literal_parts = re.split(r"\{[^/}]+\}", template)
    return re.compile("^" + "([^/]+)".join(re.escape(p) for p in literal_parts) + "$")


@cache
def _compiled() -> list[tuple[str, re.Pattern[str], str, int]]:
    compiled = []
    for key in operations():
        method, template = key.split(" ", 1)
        literal = sum(1 for part in template.split("/") if part and "{" not in part)
        compiled.append((method, template_regex(template), key, literal))
    return compiled


def operation(method: str, path: str) -> str | None:
    """The description's operation a request is for; the most literal template wins a tie."""
    found = [(lit, key) for m, rx, key, lit in _compiled() if m == method and rx.match(path)]
    return max(found)[1] if found else None


def request_problems(method: str, path: str, query: list[str], body: object) -> list[str]:
    """What in a request (path below `/2.0`) the description lacks: the operation, a query
    parameter, or a key of its JSON body at any depth."""
    key = operation(method, path)
    if key is None:
        return [f"{method} {path}: no such operation"]
    spec = operations()[key]
    unknown_query = sorted(set(query) - set(spec.get("query", [])) - PAGING)
    keys = set(body) if isinstance(body, dict) else set()
    unknown_body = sorted(keys - set(spec.get("body", [])))
    if unknown_query or unknown_body:
        return [f"{key}: unknown {unknown_query} {unknown_body}"]
    returns = spec.get("returns")
    if isinstance(body, dict) and returns and spec.get("body"):
        # A body is the schema the operation answers with, written in part: its nested keys
        # are checked against that schema.
        return shape_problems(returns, body, f"{key} body")
    return []


def answer_problems(method: str, path: str, answer: object) -> list[str]:
    """Keys of a successful answer that the operation's schema lacks."""
    key = operation(method, path)
    returns = operations()[key].get("returns") if key else None
    return [] if returns is None else shape_problems(returns, answer, key or path)


def _extends(kind: str, base: str) -> bool:
    if kind == base:
        return True
    return any(_extends(parent, base) for parent in definitions().get(kind, {}).get("bases", []))


def shape_problems(kind: str, value: object, where: str) -> list[str]:
    """Keys of `value`, at any depth, that schema `kind` (or `[kind]`) does not name."""
    if value is None:
        return []
    if kind.startswith("["):
        items = value if isinstance(value, list) else []
        return [
            p
            for n, item in enumerate(items)
            for p in shape_problems(kind[1:-1], item, f"{where}[{n}]")
        ]
    if not isinstance(value, dict) or kind not in definitions():
        return []  # a scalar, or a schema the subset does not keep
    named = value.get("type")
    if isinstance(named, str) and named in definitions() and _extends(named, kind):
        kind = named
    properties = definitions()[kind].get("properties", {})
    problems = [f"{where}: {kind} has no {name!r}" for name in sorted(set(value) - set(properties))]
    for name, inner in sorted(value.items()):
        nested = str(properties.get(name, ""))
        if nested in definitions() or nested.startswith("["):
            problems += shape_problems(nested, inner, f"{where}.{name}")
    return problems
