"""Regenerate openapi_subset.json from Bitbucket Cloud's published API description.

    uv run python -m integrations.bitbucket.standin.make_openapi_subset \
        "SOURCE" path/to/swagger.v3.json [more parts of it …]

The description is Bitbucket Cloud's OpenAPI 3 document (`swagger.v3.json`, linked from the REST
reference at developer.atlassian.com/cloud/bitbucket/rest/), given whole or in parts (JSON or
YAML files, each with its own `paths` and `components`). The subset keeps what the conformance
checks read: every operation's method and path, its query parameter names, the property names
of its JSON body and the schema it answers with; and, for the schemas the stand-in and the
fixtures use (and those they refer to), each property's schema or type, the schemas it extends
(`allOf`), and each inline object as a schema of its own (`pullrequest.links`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).with_name("openapi_subset.json")
METHODS = ("get", "put", "post", "patch", "delete", "head")
# The objects the stand-in answers with and the webhook payloads are made of; a pipeline's and a
# step's state, result and target are subtypes named by their `type` (`pipeline_state_completed`
# holding a `pipeline_state_completed_failed`), which nothing refers to, so they are roots too.
ROOTS = (
    "account",
    "commitstatus",
    "error",
    "paginated_commitstatuses",
    "paginated_pipeline_steps",
    "paginated_pipelines",
    "paginated_pullrequest_comments",
    "paginated_pullrequests",
    "paginated_repository_permissions",
    "paginated_webhook_subscriptions",
    "pipeline",
    "pipeline_commit_target",
    "pipeline_ref_target",
    "pipeline_state_completed",
    "pipeline_state_completed_error",
    "pipeline_state_completed_failed",
    "pipeline_state_completed_successful",
    "pipeline_step",
    "pipeline_step_state_completed",
    "pipeline_step_state_completed_error",
    "pipeline_step_state_completed_failed",
    "pipeline_step_state_completed_successful",
    "pullrequest",
    "pullrequest_comment",
    "repository",
    "repository_permission",
    "team",
    "user",
    "webhook_subscription",
)


def load(paths: list[Path]) -> dict[str, Any]:
    """The description's parts merged: their paths and their schemas."""
    spec: dict[str, Any] = {"paths": {}, "components": {"schemas": {}, "parameters": {}}}
    for path in paths:
        text = path.read_text()
        if path.suffix in (".yaml", ".yml"):
            import yaml  # only to read a YAML part; the description itself is JSON

            part = yaml.safe_load(text)
        else:
            part = json.loads(text)
        spec["paths"].update(part.get("paths", {}))
        for kind in ("schemas", "parameters"):
            spec["components"][kind].update(part.get("components", {}).get(kind, {}))
    return spec


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _ref_name(node: dict[str, Any]) -> str | None:
    return str(node["$ref"]).rsplit("/", 1)[-1] if "$ref" in node else None


def _properties(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """A schema's properties, with those of every `allOf` part."""
    node = _resolve(spec, node)
    found: dict[str, Any] = {}
    for part in node.get("allOf", []):
        found |= _properties(spec, part)
    return found | dict(node.get("properties", {}))


def _body(spec: dict[str, Any], op: dict[str, Any]) -> list[str]:
    body = _resolve(spec, op.get("requestBody", {}))
    schema = body.get("content", {}).get("application/json", {}).get("schema")
    return sorted(_properties(spec, schema)) if schema else []


def _returns(spec: dict[str, Any], op: dict[str, Any]) -> str | None:
    answer: dict[str, Any] = next(
        (op["responses"][s] for s in ("200", "201") if s in op["responses"]), {}
    )
    schema = _resolve(spec, answer).get("content", {}).get("application/json", {}).get("schema")
    return _ref_name(schema) if schema else None


def _operation(spec: dict[str, Any], item: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    params = [_resolve(spec, p) for p in item.get("parameters", []) + op.get("parameters", [])]
    query = sorted({p["name"] for p in params if p.get("in") == "query"})
    entry = {"query": query, "body": _body(spec, op), "returns": _returns(spec, op)}
    return {k: v for k, v in entry.items() if v}


class _Definitions:
    """Schemas as property -> kind: a schema's name, `[name]` for a list, or a JSON type; an
    inline object becomes a schema named `<owner>.<property>`."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.kept: dict[str, dict[str, Any]] = {}
        self.todo: list[str] = []

    def keep(self, name: str, node: dict[str, Any]) -> None:
        if name in self.kept:
            return
        node = _resolve(self.spec, node)
        bases = [n for part in node.get("allOf", []) if (n := _ref_name(part))]
        entry: dict[str, Any] = {"bases": bases} if bases else {}
        self.kept[name] = entry
        properties = _properties(self.spec, node)
        entry["properties"] = {
            key: self._kind(f"{name}.{key}", value) for key, value in sorted(properties.items())
        }
        self.todo += bases

    def _kind(self, name: str, node: dict[str, Any]) -> str:
        ref = _ref_name(node)
        if ref is not None:
            self.todo.append(ref)
            return ref
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            return f"[{self._kind(name, node['items'])}]"
        if node.get("type") == "object" or "properties" in node or "allOf" in node:
            if not _properties(self.spec, node):
                return "object"
            self.keep(name, node)
            return name
        return str(node.get("type", "object"))

    def build(self, roots: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        self.todo = list(roots)
        schemas = self.spec["components"]["schemas"]
        while self.todo:
            name = self.todo.pop()
            if name not in self.kept:
                self.keep(name, schemas[name])
        return dict(sorted(self.kept.items()))


def build(spec: dict[str, Any], source: str) -> dict[str, Any]:
    operations = {
        f"{method.upper()} {path}": _operation(spec, item, item[method])
        for path, item in sorted(spec["paths"].items())
        for method in METHODS
        if method in item
    }
    definitions = _Definitions(spec).build(ROOTS)
    return {"source": source, "operations": operations, "definitions": definitions}


def render(subset: dict[str, Any]) -> str:
    """One operation or schema per line, so a regenerated subset diffs readably."""

    def block(items: dict[str, Any]) -> str:
        return ",\n  ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in items.items())

    return (
        f'{{\n "source": {json.dumps(subset["source"])},\n'
        f' "operations": {{\n  {block(subset["operations"])}\n }},\n'
        f' "definitions": {{\n  {block(subset["definitions"])}\n }}\n}}\n'
    )


def main(argv: list[str]) -> None:
    origin, paths = argv[0], [Path(p) for p in argv[1:]]
    source = f"Bitbucket Cloud's OpenAPI description (swagger.v3.json), {origin}"
    OUTPUT.write_text(render(build(load(paths), source)))
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
