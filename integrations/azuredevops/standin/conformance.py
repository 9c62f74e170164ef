"""Conformance with Microsoft's Azure DevOps REST API descriptions (spec_subset.json, made by
make_spec_subset from `vsts-rest-api-specs`): which operation a request is for, what in a
request the description lacks (a query parameter, a body property, the API version), and
which keys of an answer or a payload its definition lacks.

The descriptions give a list's answer as the array itself; the service wraps every list as
`{"count": n, "value": [...]}`, which is checked as the array it wraps."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

SUBSET = Path(__file__).with_name("spec_subset.json")
# Described as a class with a `links` dictionary, sent as that dictionary itself (`_links`:
# `{"self": {"href": …}, "threads": …}`): its keys are the link names.
FREE_FORM = (":ReferenceLinks",)


@cache
def description() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SUBSET.read_text())
    return data


def operations() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = description()["operations"]
    return found


def definitions() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = description()["definitions"]
    return found


def template_regex(template: str) -> re.Pattern[str]:
    literal_parts = re.split(r"\{[^/}]+\}", template)
    return re.compile("^" + "([^/]+)".join(re.escape(p) for p in literal_parts) + "$", re.I)


@cache
def _compiled() -> list[tuple[str, re.Pattern[str], str, int]]:
    compiled = []
    for key in operations():
        method, template = key.split(" ", 1)
        literal = sum(1 for part in template.split("/") if part and "{" not in part)
        compiled.append((method, template_regex(template), key, literal))
    return compiled


def operation(method: str, path: str) -> str | None:
    """The description's operation a request is for (paths match without regard to case, as
    the service does); the most literal template wins a tie."""
    found = [(lit, key) for m, rx, key, lit in _compiled() if m == method and rx.match(path)]
    return max(found)[1] if found else None


def request_problems(
    method: str, path: str, query: dict[str, list[str]], body: object
) -> list[str]:
    """What in a request the description lacks, and an API version it does not name."""
    key = operation(method, path)
    if key is None:
        return [f"{method} {path}: no such operation"]
    spec = operations()[key]
    problems = []
    unknown_query = sorted(set(query) - set(spec.get("query", [])))
    keys = set(body) if isinstance(body, dict) else set()
    unknown_body = sorted(keys - set(spec.get("body", [])))
    if unknown_query or unknown_body:
        problems.append(f"{key}: unknown {unknown_query} {unknown_body}")
    if query.get("api-version") != [spec.get("version")]:
        problems.append(
            f"{key}: api-version {query.get('api-version')} is not {spec.get('version')}"
        )
    return problems


def answer_problems(method: str, path: str, answer: object) -> list[str]:
    key = operation(method, path)
    returns = operations()[key].get("returns") if key else None
    if returns is None:
        return []
    if returns.startswith("[") and isinstance(answer, dict) and set(answer) <= {"count", "value"}:
        answer = answer.get("value")
    return shape_problems(returns, answer, key or path)


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
    if kind.endswith(FREE_FORM):
        return []
    properties = definitions().get(kind)
    if not properties or not isinstance(value, dict):
        return []
    problems = [f"{where}: {kind} has no {name!r}" for name in sorted(set(value) - set(properties))]
    for name, inner in sorted(value.items()):
        nested = properties.get(name, "")
        if ":" in nested:
            problems += shape_problems(nested, inner, f"{where}.{name}")
    return problems
