"""Conformance with GitHub's published OpenAPI description: which operation a request is for,
and what in it the description lacks (integrations/github/standin/openapi_paths.json). A GraphQL
request is checked against GitHub's published GraphQL schema instead (`graphql`).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from integrations.github.standin.graphql import operation_problems
from integrations.standin.server import Recorded, template_regex

OPENAPI_FIXTURE = Path(__file__).with_name("openapi_paths.json")


@cache
def openapi_operations() -> dict[str, dict[str, Any]]:
    """`"METHOD /template"` -> its query parameter and JSON body property names (and, under
    `items`, the property names of the objects in the body's arrays)."""
    data = json.loads(OPENAPI_FIXTURE.read_text())
    operations: dict[str, dict[str, Any]] = data["operations"]
    return operations


@cache
def _compiled_operations() -> list[tuple[str, re.Pattern[str], str, int]]:
    compiled = []
    for key in openapi_operations():
        method, template = key.split(" ", 1)
        literal = sum(1 for part in template.split("/") if part and "{" not in part)
        compiled.append((method, template_regex(template), key, literal))
    return compiled


def openapi_operation(method: str, path: str) -> str | None:
    """The spec's operation a request is for; the most literal template wins a tie."""
    found = [
        (lit, key) for m, rx, key, lit in _compiled_operations() if m == method and rx.match(path)
    ]
    return max(found)[1] if found else None


def conformance_problems(requests: list[Recorded]) -> list[str]:
    """Each request whose method, path, query names or body keys the description lacks."""
    problems = []
    operations = openapi_operations()
    for request in requests:
        if (request.method, request.path) == ("POST", "/graphql"):
            problems += [f"POST /graphql: {p}" for p in operation_problems(request.body)]
            continue
        key = openapi_operation(request.method, request.path)
        if key is None:
            problems.append(f"{request.method} {request.path}: no such operation")
            continue
        unknown_query = set(request.query) - set(operations[key].get("query", []))
        body_keys = set(request.body) if isinstance(request.body, dict) else set()
        unknown_body = body_keys - set(operations[key].get("body", []))
        unknown_body |= _unknown_item_keys(request.body, operations[key].get("items", {}))
        if unknown_query or unknown_body:
            problems.append(f"{key}: unknown {sorted(unknown_query)} {sorted(unknown_body)}")
    return problems


def _unknown_item_keys(body: object, items: dict[str, list[str]]) -> set[str]:
    """`comments[].typo` for each key of an object in a body array the description lacks."""
    unknown: set[str] = set()
    if not isinstance(body, dict):
        return unknown
    for name, known in items.items():
        for item in body.get(name) or []:
            keys = set(item) if isinstance(item, dict) else set()
            unknown |= {f"{name}[].{key}" for key in keys - set(known)}
    return unknown
