"""Generic code names no provider: a provider is its folder under `integrations/` and one line in
the registry, and the rest of Resolver asks the registry. This walks the syntax tree of every
module in `resolver/`, and in what the providers share (`integrations/toolkit/`, the stand-ins'
`integrations/standin/`), and fails on an identifier or a string literal that names a provider.
Docstrings and comments may still use one as an example; they are not code."""

from __future__ import annotations

import ast
import re
from itertools import pairwise
from pathlib import Path

import pytest

from integrations import registry
from tests.support.syntax import parsed

ROOT = Path(__file__).resolve().parents[1]
# The installed providers, and forges people ask for that a new folder may bring.
KNOWN = ("forgejo", "gitea", "bitbucket", "azure", "codeberg", "teams", "discord")
NAMES = re.compile("|".join(sorted({*registry.names(), *KNOWN})), re.IGNORECASE)

# The documented list: where a provider's name is data, not a decision about a provider.
ALLOWED: dict[str, str] = {
    "resolver/core/redact.py": "the shapes of well-known tokens, scrubbed from any text",
    "resolver/onboarding/strength.py": "words a weak webhook secret is made of",
    "resolver/agent/instructions.py": "instruction files other agents' users already keep in "
    "a repository (`.github/copilot-instructions.md` is a path, not a provider)",
    "resolver/store/migrations/versions/0016_typed_triggers.py": "a data migration: its "
    "downgrade writes back the flat shape's own keys of one forge's rows",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The string constants that are docstrings: of a module, class or function, and the
    attribute docstrings written under an assignment."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
        for before, after in pairwise(body):
            if (
                isinstance(before, ast.Assign | ast.AnnAssign)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
            ):
                found.add(id(after.value))
    return found


def _words(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    return []


def named_providers(source: str) -> list[tuple[int, str]]:
    """(line, text) for each identifier or non-docstring string that names a provider."""
    tree = parsed(source)
    docs = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        words = _words(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            words = [node.value]
        for word in words:
            if word and NAMES.search(word):
                hits.append((getattr(node, "lineno", 0), word[:80]))
    return hits


GENERIC = ("resolver", "integrations/toolkit", "integrations/standin")


def test_generic_code_names_no_provider() -> None:
    found = []
    for path in sorted(path for top in GENERIC for path in (ROOT / top).rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED:
            continue
        found += [f"{name}:{line}: {text!r}" for line, text in named_providers(path.read_text())]
    assert not found, "generic code names a provider; ask the registry instead:\n" + "\n".join(
        found
    )


def test_every_allowed_module_exists_and_still_needs_its_place() -> None:
    for name in ALLOWED:
        path = ROOT / name
        assert path.is_file(), f"{name} is gone: drop it from ALLOWED"
        assert named_providers(path.read_text()), f"{name} names no provider: drop it"


@pytest.mark.parametrize(
    "source",
    [
        'if source == "gitlab":\n    pass\n',
        "from integrations.github import client\n",
        "def jira_scope() -> None:\n    pass\n",
        "settings.slack_client_id\n",
        'f(provider="linear")\n',
        "x = github\n",
    ],
)
def test_a_provider_named_in_code_is_found(source: str) -> None:
    assert named_providers(source)


@pytest.mark.parametrize(
    "source",
    [
        '"""A module that, as GitHub does, takes a comment."""\n',
        "def f() -> None:\n    '''Like a GitLab note.'''\n",
        "x = 1  # GitHub says so\n",
        'x: int = 1\n"""Slack\'s limit."""\n',
    ],
)
def test_docstrings_and_comments_may_name_one(source: str) -> None:
    assert not named_providers(source)
