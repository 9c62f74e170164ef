"""Settings are read at the edges: the composition roots read them once per request, task or
command (with the stored-settings overlay over them) and pass down the values each stage needs.
This walks the syntax tree of every module in `resolver/` and `integrations/` and fails on a call
of `get_settings()` outside those roots, or in a module on the list below that no longer calls
it (so the list only shrinks)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.syntax import parsed

ROOT = Path(__file__).resolve().parents[1]

ROOTS = (
    "resolver/app.py",  # the HTTP app
    "resolver/tasks.py",  # the Celery tasks
    "resolver/cli/",  # the commands
    "resolver/web/context.py",  # the web request's context: one read per request
    "resolver/store/migrations/env.py",  # alembic's own entry point, run by `upgrade`
)

# Modules that still read settings deep, to be handed their values by a root. Shrink to empty.
REMAINING: frozenset[str] = frozenset()


def _calls(path: Path) -> list[int]:
    tree = parsed(path.read_text(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "get_settings")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "get_settings")
        )
    ]


def _readers() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for package in ("resolver", "integrations"):
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = _calls(path)
            if lines:
                found[path.relative_to(ROOT).as_posix()] = lines
    return found


def _root(name: str) -> bool:
    return any(name == r or (r.endswith("/") and name.startswith(r)) for r in ROOTS)


def test_settings_are_read_only_at_the_composition_roots() -> None:
    deep = {n: lines for n, lines in _readers().items() if not _root(n) and n not in REMAINING}
    assert not deep, f"settings read outside a composition root (pass them down instead): {deep}"


def test_the_remaining_list_only_names_modules_that_still_read_settings() -> None:
    readers = _readers()
    stale = sorted(n for n in REMAINING if n not in readers)
    assert not stale, f"these no longer read settings: take them off REMAINING: {stale}"
