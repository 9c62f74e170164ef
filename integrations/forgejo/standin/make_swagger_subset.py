"""Regenerate swagger_subset.json from Forgejo's published API description.

    uv run python -m integrations.forgejo.standin.make_swagger_subset \
        path/to/templates/swagger/v1_json.tmpl "forgejo/forgejo at <commit>"

The description is `templates/swagger/v1_json.tmpl` in the Forgejo repository (served by every
instance at `/swagger.v1.json`). The subset keeps what the conformance checks read: every
operation's method and path, its query parameter names, the property names of its JSON body
and the definition it answers with; and, for the definitions the stand-in and the fixtures use
(and those they refer to), each property's definition or type.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).with_name("swagger_subset.json")
METHODS = ("get", "put", "post", "patch", "delete", "head")
# The objects the stand-in answers with and the webhook payloads are made of.
ROOTS = (
    "Comment",
    "Hook",
    "Issue",
    "PayloadCommit",
    "PullRequest",
    "PullReview",
    "PullReviewComment",
    "Reaction",
    "RepoCollaboratorPermission",
    "Repository",
    "User",
)
_TEMPLATE = re.compile(r"\{\{[^}]*\}\}")


def load(path: Path) -> dict[str, Any]:
    """The description, its Go template placeholders (version, sub-URL) blanked."""
    spec: dict[str, Any] = json.loads(_TEMPLATE.sub("", path.read_text()))
    return spec


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _name(node: dict[str, Any]) -> str | None:
    """`Comment` for a reference to a definition, `[Comment]` for a list of them."""
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    items = node.get("items")
    if node.get("type") == "array" and isinstance(items, dict) and "$ref" in items:
        return f"[{str(items['$ref']).rsplit('/', 1)[-1]}]"
    return None


def _operation(spec: dict[str, Any], item: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    params = [_resolve(spec, p) for p in item.get("parameters", []) + op.get("parameters", [])]
    query = sorted({p["name"] for p in params if p.get("in") == "query"})
    body: set[str] = set()
    for param in params:
        if param.get("in") == "body":
            body |= set(_resolve(spec, param.get("schema", {})).get("properties", {}))
    answer: dict[str, Any] = next(
        (op["responses"][s] for s in ("200", "201") if s in op["responses"]), {}
    )
    returns = _name(_resolve(spec, answer).get("schema", {}))
    entry = {"query": query, "body": sorted(body), "returns": returns}
    return {k: v for k, v in entry.items() if v}


def _property(node: dict[str, Any]) -> str:
    return _name(node) or str(node.get("type", "object"))


def _definitions(spec: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The root definitions and every definition they refer to, as property -> kind."""
    kept: dict[str, dict[str, str]] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        properties = spec["definitions"][name].get("properties", {})
        kept[name] = {key: _property(value) for key, value in sorted(properties.items())}
        todo += [kind.strip("[]") for kind in kept[name].values() if kind[0].isupper()]
        todo += [kind.strip("[]") for kind in kept[name].values() if kind.startswith("[")]
    return dict(sorted(kept.items()))


def build(spec: dict[str, Any], source: str) -> dict[str, Any]:
    operations = {
        f"{method.upper()} {path}": _operation(spec, item, item[method])
        for path, item in sorted(spec["paths"].items())
        for method in METHODS
        if method in item
    }
    return {"source": source, "operations": operations, "definitions": _definitions(spec)}


def render(subset: dict[str, Any]) -> str:
    """One operation or definition per line, so a regenerated subset diffs readably."""

    def block(items: dict[str, Any]) -> str:
        return ",\n  ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in items.items())

    return (
        f'{{\n "source": {json.dumps(subset["source"])},\n'
        f' "operations": {{\n  {block(subset["operations"])}\n }},\n'
        f' "definitions": {{\n  {block(subset["definitions"])}\n }}\n}}\n'
    )


def main(argv: list[str]) -> None:
    path, origin = Path(argv[0]), argv[1]
    source = f"Forgejo's templates/swagger/v1_json.tmpl, {origin}"
    OUTPUT.write_text(render(build(load(path), source)))
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
