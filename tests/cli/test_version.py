"""The release is written once (pyproject.toml) and the command line says it."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_pyprojects_and_the_changelog_has_it() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    done = subprocess.run(
        [sys.executable, "-m", "resolver.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"resolver {declared}"
    release = declared.removesuffix(".dev0")
    assert f"## {release}" in (ROOT / "CHANGELOG.md").read_text()
