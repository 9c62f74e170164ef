"""Parsing the project's own modules for the tests that read its code."""

from __future__ import annotations

import ast
import gc


def parsed(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, with the collector paused and one more try: Python 3.11.2's AST constructor
    raises a spurious `SystemError: AST constructor recursion depth mismatch` now and then (a
    test reading the code failed in one run of the unit group in a few)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            return ast.parse(source, filename)
        except SystemError:
            return ast.parse(source, filename)
    finally:
        if enabled:
            gc.enable()
