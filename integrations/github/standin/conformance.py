"""Conformance with GitHub's published OpenAPI description: which operation a request is for,
and what in it the description lacks (integrations/github/standin/openapi_paths.json). A GraphQL
request is checked against GitHub's published GraphQL schema instead (`graphql`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from integrations.github.standin.graphql import operation_problems
from integrations.standin.conformance import Description
from integrations.standin.server import Recorded

OPENAPI_FIXTURE = Path(__file__).with_name("openapi_paths.json")


class GitHubDescription(Description):
    """An operation here also names, under `items`, the property names of the objects in its
    body's arrays."""

    def unknown_body(self, spec: Mapping[str, Any], body: object) -> set[str]:
        return super().unknown_body(spec, body) | _unknown_item_keys(body, spec.get("items", {}))


API: Final = GitHubDescription(OPENAPI_FIXTURE)
openapi_operation: Final = API.operation


def openapi_operations() -> dict[str, dict[str, Any]]:
    """`"METHOD /template"` -> its query parameter and JSON body property names (and, under
    `items`, the property names of the objects in the body's arrays)."""
    return API.operations


def conformance_problems(requests: list[Recorded]) -> list[str]:
    """Each request whose method, path, query names or body keys the description lacks."""
    problems = []
    for request in requests:
        if (request.method, request.path) == ("POST", "/graphql"):
            problems += [f"POST /graphql: {p}" for p in operation_problems(request.body)]
            continue
        problems += API.request_problems(request.method, request.path, request.query, request.body)
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
