"""Regenerate integrations/github/standin/graphql_schema.graphql from GitHub's GraphQL schema.

    uv run python -m integrations.github.standin.make_graphql_schema [path/to/schema.graphql]

Without an argument it runs `npm pack @octokit/graphql-schema` in a temporary directory. The
whole schema is over a megabyte, so the fixture keeps the types the stand-in serves (`KEPT`),
each as published, less the fields whose type or arguments lead outside them; every scalar and
directive stays. The result must build as a schema (graphql-core checks it here).
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from graphql import (
    DefinitionNode,
    DirectiveDefinitionNode,
    DocumentNode,
    EnumTypeDefinitionNode,
    FieldDefinitionNode,
    InputObjectTypeDefinitionNode,
    InputValueDefinitionNode,
    InterfaceTypeDefinitionNode,
    ListTypeNode,
    NamedTypeNode,
    NonNullTypeNode,
    ObjectTypeDefinitionNode,
    ScalarTypeDefinitionNode,
    SchemaDefinitionNode,
    TypeNode,
    UnionTypeDefinitionNode,
    build_ast_schema,
    parse,
    print_ast,
)

PACKAGE = "@octokit/graphql-schema"
SCHEMA_MEMBER = "package/schema.graphql"
OUTPUT = Path(__file__).with_name("graphql_schema.graphql")
BUILT_IN = frozenset({"String", "Int", "Float", "Boolean", "ID"})
KEPT = frozenset(
    {
        "Query",
        "Mutation",
        "Node",
        "Actor",
        "User",
        "Bot",
        "Repository",
        "PullRequest",
        "PullRequestReviewThreadConnection",
        "PullRequestReviewThreadEdge",
        "PullRequestReviewThread",
        "PullRequestReviewCommentConnection",
        "PullRequestReviewCommentEdge",
        "PullRequestReviewComment",
        "PageInfo",
        "ResolveReviewThreadInput",
        "ResolveReviewThreadPayload",
        "UnresolveReviewThreadInput",
        "UnresolveReviewThreadPayload",
        "DiffSide",
        "PullRequestReviewThreadSubjectType",
        "PullRequestState",
        "RepositoryPrivacy",
    }
)


def _download(workdir: Path) -> Path:
    subprocess.run(["npm", "pack", PACKAGE], cwd=workdir, check=True, stdout=subprocess.DEVNULL)
    tarball = next(workdir.glob("octokit-graphql-schema-*.tgz"))
    with tarfile.open(tarball) as archive:
        archive.extract(SCHEMA_MEMBER, workdir, filter="data")
    return workdir / SCHEMA_MEMBER


def _named(node: TypeNode) -> str:
    while isinstance(node, ListTypeNode | NonNullTypeNode):
        node = node.type
    assert isinstance(node, NamedTypeNode)
    return node.name.value


def _keeps(kept: set[str], value: FieldDefinitionNode | InputValueDefinitionNode) -> bool:
    arguments = getattr(value, "arguments", None) or ()
    return _named(value.type) in kept and all(_named(a.type) in kept for a in arguments)


def _trimmed(definition: DefinitionNode, kept: set[str]) -> DefinitionNode:
    """The definition with only the fields, interfaces and members that stay inside `kept`."""
    changes: dict[str, Any] = {}
    if isinstance(definition, ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode):
        changes["fields"] = tuple(f for f in definition.fields or () if _keeps(kept, f))
        changes["interfaces"] = tuple(
            i for i in definition.interfaces or () if i.name.value in kept
        )
    elif isinstance(definition, InputObjectTypeDefinitionNode):
        changes["fields"] = tuple(f for f in definition.fields or () if _keeps(kept, f))
    elif isinstance(definition, UnionTypeDefinitionNode):
        changes["types"] = tuple(t for t in definition.types or () if t.name.value in kept)
    kept_attributes = {key: getattr(definition, key) for key in definition.keys}
    return definition.__class__(**{**kept_attributes, **changes})


def trim(document: DocumentNode) -> DocumentNode:
    """The published schema cut down to `KEPT`, every scalar and every directive."""
    scalars = {
        d.name.value for d in document.definitions if isinstance(d, ScalarTypeDefinitionNode)
    }
    kept = set(KEPT) | scalars | BUILT_IN
    definitions: list[DefinitionNode] = []
    for definition in document.definitions:
        if isinstance(definition, DirectiveDefinitionNode | SchemaDefinitionNode):
            definitions.append(definition)
        elif isinstance(definition, ScalarTypeDefinitionNode | EnumTypeDefinitionNode):
            if definition.name.value in kept:
                definitions.append(definition)
        elif (name := getattr(definition, "name", None)) is not None and name.value in kept:
            definitions.append(_trimmed(definition, kept))
    return DocumentNode(definitions=tuple(definitions))


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        source = Path(argv[1]) if len(argv) > 1 else _download(Path(workdir))
        document = trim(parse(source.read_text()))
    build_ast_schema(document)  # raises when the trimmed schema does not hold together
    header = f"# Generated by integrations/github/standin/make_graphql_schema.py from {PACKAGE}.\n"
    OUTPUT.write_text(header + print_ast(document) + "\n")
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv)
