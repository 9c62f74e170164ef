"""What a webhook's verify, parse and route must not do per delivery. Building a pydantic
`TypeAdapter` compiles a validator (about a millisecond, ten times the rest of a route): GitLab's
note route once built one per delivery, at 9 to 17 times GitHub's cost in `bench/ingress.py
--verify-only`, and nothing failed. This walks the syntax tree of `resolver/` and
`integrations/` and fails on a `TypeAdapter(...)` built inside a function: build it once, at
module level (or behind a cache)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _built_in_functions(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[int] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if any(_cached(d) for d in function.decorator_list):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and _named(node.func, "TypeAdapter"):
                found.append(node.lineno)
    return found


def _named(func: ast.expr, name: str) -> bool:
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


def _cached(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return _named(target, "cache") or _named(target, "lru_cache")


def test_no_type_adapter_is_built_per_call() -> None:
    found = {
        f"{path.relative_to(ROOT).as_posix()}:{line}"
        for package in ("resolver", "integrations")
        for path in sorted((ROOT / package).rglob("*.py"))
        for line in _built_in_functions(path)
    }
    assert not found, f"a TypeAdapter built per call (build it once, at module level): {found}"
