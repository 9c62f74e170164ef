"""[stand-in] A local bare git repository standing in for the project on a forge."""

from __future__ import annotations

import shutil
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


def make_remote(root: Path) -> Path:
    """A fresh bare repository with one commit: calc.py, whose add() subtracts."""
    bare = root / "acme-calc.git"
    work = root / "seed"
    for path in (bare, work):
        shutil.rmtree(path, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "calc.py").write_text(CALC)
    (work / "test_calc.py").write_text(TEST)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "Add calculator")
    git(root, "clone", "-q", "--bare", str(work), str(bare))
    shutil.rmtree(work)
    return bare
