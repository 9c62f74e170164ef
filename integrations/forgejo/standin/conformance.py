"""Conformance with Forgejo's published API description (swagger_subset.json, made by
make_swagger_subset from Forgejo's templates/swagger/v1_json.tmpl): which operation a request is
for (a path below `/api/v1`), what in a request the description lacks, and which keys of an
answer or a webhook payload its definition lacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from integrations.standin.conformance import Description

SUBSET = Path(__file__).with_name("swagger_subset.json")
API: Final = Description(SUBSET)

operation: Final = API.operation
request_problems: Final = API.request_problems
answer_problems: Final = API.answer_problems
shape_problems: Final = API.shape_problems


def description() -> dict[str, Any]:
    return API.data


def operations() -> dict[str, dict[str, Any]]:
    """`"METHOD /template"` -> its `query` and `body` names and the definition it `returns`."""
    return API.operations


def definitions() -> dict[str, dict[str, Any]]:
    """A definition's properties -> a definition name, `[Name]` for a list, or a JSON type."""
    return API.definitions
