"""What a webhook's verify, parse and route must not do per delivery. Building a pydantic
`TypeAdapter` compiles a validator (about a millisecond, ten times the rest of a route): GitLab's
note route once built one per delivery, at 9 to 17 times GitHub's cost in `bench/ingress.py
--verify-only`, and nothing failed. This walks the syntax tree of `resolver/` and
`integrations/` and fails on a `TypeAdapter(...)` built inside a function: build it once, at
module level (or behind a cache)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.syntax import parsed

ROOT = Path(__file__).resolve().parents[1]


def _built_in_functions(path: Path) -> list[int]:
    tree = parsed(path.read_text(), str(path))
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


BUILDERS = frozenset({"select", "insert", "update", "delete", "exists"})
"""SQLAlchemy's statement builders. Building a statement and adapting its result to the cached
compiled form cost the default-branch push's one read 350 µs of CPU, eight times running it
(bench/ingress's mix); built once, with bound parameters, it costs 40 µs, and nothing failed
when it was built per call."""
PER_DELIVERY = {
    "resolver/store/bot_pulls.py": ("standing",),
    "resolver/store/deliveries.py": ("lock_conversations", "claim", "first_jobs"),
    "resolver/store/jobs.py": ("insert_jobs",),
    "resolver/store/conversations.py": ("latest_jobs",),
    "resolver/store/slots.py": ("jobs_ahead",),
    "resolver/store/accounts.py": ("users_by_sender",),
    "resolver/store/callbacks.py": ("insert_callbacks",),
}
"""The store functions every webhook delivery (a mention, a push to a default branch, a red
check) runs."""


def _statements_built(path: Path, names: tuple[str, ...]) -> list[str]:
    tree = parsed(path.read_text(), str(path))
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names
    }
    assert set(functions) == set(names), f"{path.name}: no function {set(names) - set(functions)}"
    return [
        f"{name}:{node.lineno}"
        for name, function in functions.items()
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and _builds(node.func)
    ]


def _builds(func: ast.expr) -> bool:
    """`select(…)`, or a dialect's `postgresql.insert(…)`; not `found.update(…)` of a dict."""
    if isinstance(func, ast.Name):
        return func.id in BUILDERS
    return (
        isinstance(func, ast.Attribute)
        and func.attr in BUILDERS
        and isinstance(func.value, ast.Name)
        and func.value.id in {"postgresql", "sqlite", "sqlalchemy", "sa"}
    )


def test_no_statement_is_built_per_delivery() -> None:
    found = {
        f"{path}:{where}"
        for path, names in PER_DELIVERY.items()
        for where in _statements_built(ROOT / path, names)
    }
    assert not found, f"a statement built per delivery (build it once, with bindparam): {found}"


START_UP = {
    # `resolver serve` builds each server process's app with `serve_app`.
    "server": "from resolver.app import serve_app; serve_app()",
    # Each worker's start (both the one that runs jobs and the callbacks worker).
    "worker": "import resolver.tasks; from celery.signals import worker_init as w; w.send(None)",
}


@pytest.mark.parametrize("process", list(START_UP))
def test_a_process_keeps_what_it_started_with_out_of_full_collections(
    process: str, tmp_path: Path
) -> None:
    """A full pass of the garbage collector walks every object in the oldest generation, and
    stops every thread of the process meanwhile. Left there, the imports (~175,000 objects) made
    each pass 85 to 100 ms: in a server, 70 ms in which no webhook was answered (the p99 at 200
    mentions/s of a window that held one passed 10 ms). Frozen, they are never walked again."""
    probe = f"{START_UP[process]}\nimport gc\nprint(gc.get_freeze_count(), len(gc.get_objects()))"
    env = {**os.environ, "RESOLVER_DATABASE_URL": f"sqlite:///{tmp_path / 'probe.db'}"}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    frozen, walked = map(int, done.stdout.split()[-2:])
    assert frozen > 100_000, frozen
    assert walked < frozen // 20, (frozen, walked)
