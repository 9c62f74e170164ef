"""What every stand-in's conformance checks share: a vendor's published API description, cut to
the operations Resolver calls (a JSON subset with `operations` and `definitions`, made by the
provider's own script), and the walk that checks a request, an answer or a payload against it.

A provider's `standin/conformance.py` makes one `Description` of its subset, overriding the
few hooks where its description differs (how a definition lists its properties, which
property names another definition, what more a request must carry)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from integrations.standin.server import template_regex


class Description:
    """One vendor's API description subset: `operations` maps `"METHOD /template"` to its
    `query` and `body` names and the definition it `returns`; `definitions` maps a definition's
    name to its properties, each a definition's name, `[name]` for a list, or a JSON type."""

    ignored_query: frozenset[str] = frozenset()
    """Query parameters every operation takes that the description does not repeat."""

    def __init__(self, subset: Path, *, ignore_case: bool = False) -> None:
        self.subset = subset
        self._flags = re.IGNORECASE if ignore_case else 0

    @cached_property
    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.subset.read_text())
        return data

    @property
    def operations(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = self.data["operations"]
        return found

    @property
    def definitions(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = self.data["definitions"]
        return found

    @cached_property
    def _compiled(self) -> list[tuple[str, re.Pattern[str], str, int]]:
        compiled = []
        for key in self.operations:
            method, template = key.split(" ", 1)
            literal = sum(1 for part in template.split("/") if part and "{" not in part)
            pattern = re.compile(template_regex(template).pattern, self._flags)
            compiled.append((method, pattern, key, literal))
        return compiled

    def operation(self, method: str, path: str) -> str | None:
        """The description's operation a request is for; the most literal template wins a
        tie."""
        found = [(lit, key) for m, rx, key, lit in self._compiled if m == method and rx.match(path)]
        return max(found)[1] if found else None

    def request_problems(
        self, method: str, path: str, query: Iterable[str], body: object
    ) -> list[str]:
        """What in a request the description lacks: the operation, a query parameter or a key
        of its JSON body (and what `more_request_problems` adds)."""
        key = self.operation(method, path)
        if key is None:
            return [f"{method} {path}: no such operation"]
        spec = self.operations[key]
        unknown_query = sorted(set(query) - set(spec.get("query", [])) - self.ignored_query)
        unknown_body = sorted(self.unknown_body(spec, body))
        problems = []
        if unknown_query or unknown_body:
            problems.append(f"{key}: unknown {unknown_query} {unknown_body}")
        return self.more_request_problems(key, query, body, problems)

    def unknown_body(self, spec: Mapping[str, Any], body: object) -> set[str]:
        """The keys of a JSON body the operation does not take."""
        keys = set(body) if isinstance(body, dict) else set()
        return keys - set(spec.get("body", []))

    def more_request_problems(
        self, key: str, query: Iterable[str], body: object, problems: list[str]
    ) -> list[str]:
        """A hook: the request's problems, given those found so far."""
        return problems

    def answer_problems(self, method: str, path: str, answer: object) -> list[str]:
        """Keys of a successful answer that the operation's definition lacks."""
        key = self.operation(method, path)
        returns = self.operations[key].get("returns") if key else None
        if returns is None:
            return []
        return self.shape_problems(returns, self.unwrap(returns, answer), key or path)

    def unwrap(self, returns: str, answer: object) -> object:
        """A hook: the answer as the description gives it."""
        return answer

    def shape_problems(self, kind: str, value: object, where: str) -> list[str]:
        """Keys of `value`, at any depth, that definition `kind` (or `[kind]`) does not name."""
        if value is None:
            return []
        if kind.startswith("["):
            items = value if isinstance(value, list) else []
            return [
                p
                for n, item in enumerate(items)
                for p in self.shape_problems(kind[1:-1], item, f"{where}[{n}]")
            ]
        found = self.properties(kind, value) if isinstance(value, dict) else None
        if found is None or not isinstance(value, dict):
            return []  # a scalar, or a definition the subset does not keep
        kind, properties = found
        problems = [
            f"{where}: {kind} has no {name!r}" for name in sorted(set(value) - set(properties))
        ]
        for name, inner in sorted(value.items()):
            # A JSON type names no definition, and is then passed over.
            if nested := str(properties.get(name, "")):
                problems += self.shape_problems(nested, inner, f"{where}.{name}")
        return problems

    def properties(
        self, kind: str, value: Mapping[str, Any]
    ) -> tuple[str, Mapping[str, Any]] | None:
        """A hook: the definition `value` is checked against and its properties; None: not
        checked. By default, the definition's own properties, when it has any."""
        properties = self.definitions.get(kind)
        return (kind, properties) if properties else None
