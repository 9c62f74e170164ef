"""Regenerate spec_subset.json from Microsoft's Azure DevOps REST API descriptions.

    uv run python -m integrations.azuredevops.standin.make_spec_subset \
        path/to/vsts-rest-api-specs "MicrosoftDocs/vsts-rest-api-specs at <commit>"

The descriptions are `specification/<area>/7.1/<file>.json` in Microsoft's
`vsts-rest-api-specs` repository (Swagger 2.0, one file per area, each with a UTF-8 BOM). The
subset keeps what the conformance checks read: for the areas Resolver calls, every operation's
method and path, its query parameter names, the API version it asks for, the property names of
its JSON body and the definition it answers with; and the definitions the stand-in and the
fixtures use (and those they refer to), each property's definition or type. A definition is
named `<area>:<Name>`: two areas may both define a `Comment`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).with_name("spec_subset.json")
METHODS = ("get", "put", "post", "patch", "delete")
AREAS = {
    "git": "git/7.1/git.json",
    "wit": "wit/7.1/workItemTracking.json",
    "security": "security/7.1/security.json",
    "ims": "ims/7.1/identities.json",
    "hooks": "hooks/7.1/serviceHooks.json",
    "profile": "profile/7.1/profile.json",
    "build": "build/7.1/build.json",
}
ROOTS = {
    "git": (
        "GitRepository",
        "GitPullRequest",
        "GitPullRequestCommentThread",
        "Comment",
        "GitPush",
        "IdentityRefWithVote",
    ),
    "wit": ("WorkItem", "WorkItemUpdate", "Comment", "CommentList"),
    "security": ("AccessControlList",),
    "ims": ("Identity",),
    "hooks": ("Subscription",),
    "profile": ("Profile",),
    "build": ("Build", "Timeline"),
}
# Paths the Resolver client never calls are kept only in areas it calls into; the wit area is
# cut to work items and their comments.
WIT_PREFIX = "/{organization}/{project}/_apis/wit/work"


def load(path: Path) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(path.read_text(encoding="utf-8-sig"))
    return spec


def _ref_name(node: dict[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    return None


def _kind(area: str, node: dict[str, Any]) -> str:
    """`area:Name` for a definition, `[area:Name]` for a list of them, else a JSON type."""
    name = _ref_name(node)
    if name is not None:
        return f"{area}:{name}"
    items = node.get("items")
    if node.get("type") == "array" and isinstance(items, dict) and _ref_name(items):
        return f"[{area}:{_ref_name(items)}]"
    return str(node.get("type") or "object")


def properties(spec: dict[str, Any], name: str) -> dict[str, Any]:
    """A definition's properties, those it inherits through `allOf` included."""
    node = spec["definitions"].get(name) or {}
    found: dict[str, Any] = {}
    for part in node.get("allOf") or []:
        parent = _ref_name(part)
        found |= properties(spec, parent) if parent else part.get("properties") or {}
    return found | (node.get("properties") or {})


def _parameters(spec: dict[str, Any], op: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for item in op.get("parameters") or []:
        if "$ref" in item:
            key = str(item["$ref"]).rsplit("/", 1)[-1]
            found.append(dict(spec["parameters"][key], ref=key))
        else:
            found.append(item)
    return found


def operation(area: str, spec: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    params = _parameters(spec, op)
    entry: dict[str, Any] = {}
    query = sorted(p["name"] for p in params if p.get("in") == "query")
    if query:
        entry["query"] = query
    version = next((p["ref"] for p in params if p.get("name") == "api-version"), None)
    if version:
        entry["version"] = "7.1" + version.removeprefix("api-Version")
    body = next((p for p in params if p.get("in") == "body"), None)
    if body is not None:
        name = _ref_name(body.get("schema") or {})
        if name is not None:
            entry["body"] = sorted(properties(spec, name))
    answer = (op.get("responses") or {}).get("200", {}).get("schema")
    if isinstance(answer, dict):
        entry["returns"] = _kind(area, answer)
    return entry


def _definitions(area: str, spec: dict[str, Any]) -> dict[str, dict[str, str]]:
    kept: dict[str, dict[str, str]] = {}
    todo = list(ROOTS[area])
    while todo:
        name = todo.pop()
        if f"{area}:{name}" in kept or name not in spec["definitions"]:
            continue
        props = {key: _kind(area, value) for key, value in properties(spec, name).items()}
        kept[f"{area}:{name}"] = props
        todo += [kind.strip("[]").split(":", 1)[1] for kind in props.values() if ":" in kind]
    return kept


def subset(root: Path, source: str) -> dict[str, Any]:
    operations: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for area, file in AREAS.items():
        spec = load(root / "specification" / file)
        for path, ops in spec["paths"].items():
            if area == "wit" and not path.startswith(WIT_PREFIX):
                continue
            if area == "profile" and "/profiles/{id}" not in path:
                continue
            if area == "build" and "/_apis/build/builds/{buildId}" not in path:
                continue
            for method in METHODS:
                if method in ops:
                    operations[f"{method.upper()} {path}"] = operation(area, spec, ops[method])
        definitions |= _definitions(area, spec)
    return {"source": source, "operations": operations, "definitions": definitions}


def main(argv: list[str]) -> None:
    root, source = Path(argv[1]), argv[2]
    data = subset(root, source)
    lines = ["{", f' "source": {json.dumps(data["source"])},', ' "operations": {']
    ops = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data["operations"].items()]
    lines += [",\n".join(ops), " },", ' "definitions": {']
    defs = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(data["definitions"].items())]
    lines += [",\n".join(defs), " }", "}"]
    OUTPUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
