"""Conformance with Bitbucket Cloud's published API description (openapi_subset.json, made by
make_openapi_subset): which operation a request is for (a path below `/2.0`), what in a
request the description lacks, and which keys of an answer or a webhook payload its schema
lacks. A value whose `type` names a schema that extends the expected one (`user` for an
`account`) is checked against it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from integrations.standin.conformance import Description

SUBSET = Path(__file__).with_name("openapi_subset.json")


class BitbucketDescription(Description):
    """A schema here is `{"properties": …, "bases": [the schemas it extends]}`."""

    # Bitbucket's paging parameters, the same on every listing (the REST reference's
    # "Pagination" page), which the description does not repeat on each operation; `next`
    # links carry them.
    ignored_query = frozenset({"page", "pagelen"})

    def more_request_problems(
        self, key: str, query: Iterable[str], body: object, problems: list[str]
    ) -> list[str]:
        spec = self.operations[key]
        returns = spec.get("returns")
        if problems or not (isinstance(body, dict) and returns and spec.get("body")):
            return problems
        # A body is the schema the operation answers with, written in part: its nested keys
        # are checked against that schema.
        return self.shape_problems(returns, body, f"{key} body")

    def properties(
        self, kind: str, value: Mapping[str, Any]
    ) -> tuple[str, Mapping[str, Any]] | None:
        if kind not in self.definitions:
            return None
        named = value.get("type")
        if isinstance(named, str) and named in self.definitions and self._extends(named, kind):
            kind = named
        return kind, self.definitions[kind].get("properties", {})

    def _extends(self, kind: str, base: str) -> bool:
        if kind == base:
            return True
        parents = self.definitions.get(kind, {}).get("bases", [])
        return any(self._extends(parent, base) for parent in parents)


API: Final = BitbucketDescription(SUBSET)
PAGING: Final = API.ignored_query

operation: Final = API.operation
request_problems: Final = API.request_problems
answer_problems: Final = API.answer_problems
shape_problems: Final = API.shape_problems


def description() -> dict[str, Any]:
    return API.data


def operations() -> dict[str, dict[str, Any]]:
    """`"METHOD /template"` -> its `query` and `body` names and the schema it `returns`."""
    return API.operations


def definitions() -> dict[str, dict[str, Any]]:
    """A schema's `properties` (-> a schema name, `[name]` for a list, or a JSON type) and the
    schemas it extends (`bases`)."""
    return API.definitions
