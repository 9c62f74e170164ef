"""Regenerate integrations/github/standin/openapi_paths.json from GitHub's OpenAPI description.

    uv run python -m integrations.github.standin.make_openapi_paths [path/to/api.github.com.json]

Without an argument it runs `npm pack @octokit/openapi` in a temporary directory. The fixture
keeps only what the conformance checks read: every operation's method and path template, its
query parameter names, the top-level property names of its JSON request body, and the property
names of the objects in its body's arrays (a review's `comments`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

PACKAGE = "@octokit/openapi"
SPEC_MEMBER = "package/generated/api.github.com.json"
OUTPUT = Path(__file__).with_name("openapi_paths.json")
METHODS = ("get", "put", "post", "patch", "delete", "head")


def _download(workdir: Path) -> Path:
    subprocess.run(["npm", "pack", PACKAGE], cwd=workdir, check=True, stdout=subprocess.DEVNULL)
    tarball = next(workdir.glob("octokit-openapi-*.tgz"))
    with tarfile.open(tarball) as archive:
        archive.extract(SPEC_MEMBER, workdir, filter="data")
    return workdir / SPEC_MEMBER


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _query_names(
    spec: dict[str, Any], item: dict[str, Any], operation: dict[str, Any]
) -> list[str]:
    params = [
        _resolve(spec, p) for p in item.get("parameters", []) + operation.get("parameters", [])
    ]
    return sorted({p["name"] for p in params if p.get("in") == "query"})


def _schema_properties(spec: dict[str, Any], schema: dict[str, Any]) -> set[str]:
    schema = _resolve(spec, schema)
    names = set(schema.get("properties", {}))
    for combinator in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(combinator, []):
            names |= _schema_properties(spec, part)
    return names


def _body_names(spec: dict[str, Any], operation: dict[str, Any]) -> list[str]:
    body = _resolve(spec, operation.get("requestBody", {}))
    schema = body.get("content", {}).get("application/json", {}).get("schema")
    return sorted(_schema_properties(spec, schema)) if schema else []


def _item_names(spec: dict[str, Any], operation: dict[str, Any]) -> dict[str, list[str]]:
    """For each array of objects in the JSON body, its items' property names."""
    body = _resolve(spec, operation.get("requestBody", {}))
    schema = body.get("content", {}).get("application/json", {}).get("schema")
    if not schema:
        return {}
    properties = _resolve(spec, schema).get("properties", {})
    found = {}
    for name, prop in properties.items():
        items = _resolve(spec, prop).get("items")
        names = _schema_properties(spec, items) if isinstance(items, dict) else set()
        if names:
            found[name] = sorted(names)
    return found


def build_fixture(spec: dict[str, Any]) -> dict[str, Any]:
    """The compact description: `"METHOD /path/{template}": {"query": [...], "body": [...]}`."""
    operations: dict[str, dict[str, Any]] = {}
    for path, item in sorted(spec["paths"].items()):
        for method in METHODS:
            if method in item:
                entry: dict[str, Any] = {
                    "query": _query_names(spec, item, item[method]),
                    "body": _body_names(spec, item[method]),
                    "items": _item_names(spec, item[method]),
                }
                operations[f"{method.upper()} {path}"] = {k: v for k, v in entry.items() if v}
    source = f"{PACKAGE} {spec['info']['version']}, generated/api.github.com.json"
    return {"source": source, "operations": operations}


def render(fixture: dict[str, Any]) -> str:
    """One operation per line, so a regenerated fixture diffs readably."""
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in fixture["operations"].items()]
    body = ",\n  ".join(lines)
    return (
        f'{{\n "source": {json.dumps(fixture["source"])},\n "operations": {{\n  {body}\n }}\n}}\n'
    )


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(argv[0]) if argv else _download(Path(scratch))
        spec = json.loads(path.read_text())
    OUTPUT.write_text(render(build_fixture(spec)))
    print(f"wrote {OUTPUT} from {spec['info']['version']}")


if __name__ == "__main__":
    main(sys.argv[1:])
