"""Conformance with Microsoft's Azure DevOps REST API descriptions (spec_subset.json, made by
make_spec_subset from `vsts-rest-api-specs`): which operation a request is for (paths match
without regard to case, as the service does), what in a request the description lacks (a query
parameter, a body property, the API version), and which keys of an answer or a payload its
definition lacks.

The descriptions give a list's answer as the array itself; the service wraps every list as
`{"count": n, "value": [...]}`, which is checked as the array it wraps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from integrations.standin.conformance import Description

SUBSET = Path(__file__).with_name("spec_subset.json")
# Described as a class with a `links` dictionary, sent as that dictionary itself (`_links`:
# `{"self": {"href": …}, "threads": …}`): its keys are the link names.
FREE_FORM = (":ReferenceLinks",)


class AzureDevOpsDescription(Description):
    """Every operation names the `api-version` it is described at."""

    def more_request_problems(
        self, key: str, query: Iterable[str], body: object, problems: list[str]
    ) -> list[str]:
        version = self.operations[key].get("version")
        given = query.get("api-version") if isinstance(query, Mapping) else None
        if given != [version]:
            problems = [*problems, f"{key}: api-version {given} is not {version}"]
        return problems

    def unwrap(self, returns: str, answer: object) -> object:
        if (
            returns.startswith("[")
            and isinstance(answer, dict)
            and set(answer) <= {"count", "value"}
        ):
            return answer.get("value")
        return answer

    def properties(
        self, kind: str, value: Mapping[str, Any]
    ) -> tuple[str, Mapping[str, Any]] | None:
        return None if kind.endswith(FREE_FORM) else super().properties(kind, value)


API: Final = AzureDevOpsDescription(SUBSET, ignore_case=True)

operation: Final = API.operation
request_problems: Final = API.request_problems
answer_problems: Final = API.answer_problems
shape_problems: Final = API.shape_problems


def description() -> dict[str, Any]:
    return API.data


def operations() -> dict[str, dict[str, Any]]:
    return API.operations


def definitions() -> dict[str, dict[str, Any]]:
    return API.definitions
