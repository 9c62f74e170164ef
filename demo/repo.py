"""[stand-in] The demo repository's files, and git for printing its diff."""

from __future__ import annotations

import subprocess
from pathlib import Path

CALC = '''"""A tiny calculator."""


def add(a: int, b: int) -> int:
    return a - b
'''

TEST = """import unittest

from calc import add


class AddTest(unittest.TestCase):
    def test_adds(self) -> None:
        self.assertEqual(add(2, 3), 5)


if __name__ == "__main__":
    unittest.main()
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=Demo", "-c", "user.email=demo@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout
