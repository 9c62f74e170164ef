"""Conformance with Forgejo's published API description (swagger_subset.json, made by
make_swagger_subset from Forgejo's templates/swagger/v1_json.tmpl): which operation a request is
for, what in a request the description lacks, and which keys of an answer or a webhook payload
its definition lacks."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

SUBSET = Path(__file__).with_name("swagger_subset.json")


@cache
def description() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SUBSET.read_text())
    return data


def operations() -> dict[str, dict[str, Any]]:
    """`"METHOD /template"` -> its `query` and `body` names and the definition it `returns`."""
    found: dict[str, dict[str, Any]] = description()["operations"]
    return found


def definitions() -> dict[str, dict[str, str]]:
    """A definition's properties -> a definition name, `[Name]` for a list, or a JSON type."""
    found: dict[str, dict[str, str]] = description()["definitions"]
    return found


def template_regex(template: str) -> re.Pattern[str]:
    """`/repos/{owner}/{repo}` as a regex with one group per parameter."""
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
    """What in a request (path below `/api/v1`) the description lacks."""
    key = operation(method, path)
    if key is None:
        return [f"{method} {path}: no such operation"]
    spec = operations()[key]
    unknown_query = sorted(set(query) - set(spec.get("query", [])))
    keys = set(body) if isinstance(body, dict) else set()
    unknown_body = sorted(keys - set(spec.get("body", [])))
    if unknown_query or unknown_body:
        return [f"{key}: unknown {unknown_query} {unknown_body}"]
    return []


def answer_problems(method: str, path: str, answer: object) -> list[str]:
    """Keys of a successful answer that the operation's definition lacks."""
    key = operation(method, path)
    returns = operations()[key].get("returns") if key else None
    return [] if returns is None else shape_problems(returns, answer, key or path)


def shape_problems(kind: str, value: object, where: str) -> list[str]:
    """Keys of `value`, at any depth, that definition `kind` (or `[kind]`) does not name."""
    if value is None:
        return []
    if kind.startswith("["):
        items = value if isinstance(value, list) else []
        return [
            p
            for n, item in enumerate(items)
            for p in shape_problems(kind[1:-1], item, f"{where}[{n}]")
        ]
    properties = definitions().get(kind)
    if not properties or not isinstance(value, dict):
        return []  # a scalar, or a definition the subset does not keep
    problems = [f"{where}: {kind} has no {name!r}" for name in sorted(set(value) - set(properties))]
    for name, inner in sorted(value.items()):
        nested = properties.get(name, "")
        if nested[:1].isupper() or nested.startswith("["):
            problems += shape_problems(nested, inner, f"{where}.{name}")
    return problems
