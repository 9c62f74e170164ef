"""What a scheduled run asks the agent, and the inputs that decide whether to propose again.
Pure.

A pull request closed without merging means "don't propose this again" until the schedule's
inputs change: its task, prompt, test command and limits, or the dependency manifests on the
default branch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

from resolver.schedules.spec import FIX_DEFAULT_BRANCH, UPDATE_DEPENDENCIES

# The files package managers keep their dependencies in, at any depth (monorepos).
MANIFESTS: Final = frozenset(
    {
        "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "Pipfile.lock", "poetry.lock",
        "uv.lock", "pdm.lock", "package.json", "package-lock.json", "yarn.lock",
        "pnpm-lock.yaml", "bun.lockb", "go.mod", "go.sum", "Cargo.toml", "Cargo.lock",
        "Gemfile", "Gemfile.lock", "composer.json", "composer.lock", "pom.xml",
        "build.gradle", "build.gradle.kts", "gradle.lockfile", "mix.exs", "mix.lock",
        "pubspec.yaml", "pubspec.lock", "Package.swift", "Package.resolved",
        "packages.config", "Directory.Packages.props",
    }
)  # fmt: skip
MAX_LISTED: Final = 30
OUTPUT_TAIL: Final = 4000


@dataclass(frozen=True)
class Manifests:
    """The dependency manifests of a tree and one digest of their contents."""

    paths: tuple[str, ...]
    digest: str


def is_manifest(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in MANIFESTS or (name.startswith("requirements") and name.endswith(".txt"))


def parse_manifests(ls_tree: str) -> Manifests:
    """The manifests in `git ls-tree -r <ref>` output; the digest covers their blob ids."""
    found: list[tuple[str, str]] = []
    for line in ls_tree.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and is_manifest(path):
            found.append((path, parts[2]))
    found.sort()
    digest = hashlib.sha256(json.dumps(found).encode()).hexdigest()
    return Manifests(tuple(path for path, _ in found), digest)


@dataclass(frozen=True)
class Inputs:
    """What a run is asked, as far as "propose again?" is concerned."""

    task: str
    prompt: str | None
    test_command: str | None
    max_iterations: int | None
    max_cost_usd: float | None
    manifests_digest: str

    def digest(self) -> str:
        values = [
            self.task,
            self.prompt,
            self.test_command,
            self.max_iterations,
            self.max_cost_usd,
            self.manifests_digest,
        ]
        return hashlib.sha256(json.dumps(values).encode()).hexdigest()


def build_instruction(
    task: str,
    prompt: str | None,
    manifests: Sequence[str],
    test_command: str | None,
) -> str:
    """The agent's instruction for a scheduled run of `task`."""
    if task == UPDATE_DEPENDENCIES:
        text = _update_dependencies(manifests, test_command)
    elif task == FIX_DEFAULT_BRANCH:
        text = _fix_default_branch(test_command or "the tests")
    else:
        return (prompt or "").strip()
    if prompt:
        text += f"\n\nThe schedule adds these instructions:\n{prompt.strip()}"
    return text


def _update_dependencies(manifests: Sequence[str], test_command: str | None) -> str:
    listed = "\n".join(f"- `{path}`" for path in manifests[:MAX_LISTED]) or "- (none found)"
    tests = f"`{test_command}`" if test_command else "the repository's tests"
    return (
        "Update this repository's outdated dependencies, in one change.\n\n"
        f"Dependency manifests on the default branch:\n{listed}\n\n"
        "For each package manager: raise dependencies to their newest releases that the "
        "declared version ranges allow (a major upgrade only if the code still works with it), "
        "and regenerate lock files with the package manager's own tool, never by hand. "
        f"Then run {tests}: they must pass. Leave out any update that breaks them and name it "
        "in your summary. If nothing can be updated, or the package registry cannot be "
        "reached, change nothing and finish with `answered`, saying why."
    )


def _fix_default_branch(test_command: str) -> str:
    return (
        f"The default branch's tests fail: `{test_command}` exits with an error. Its output "
        "is in the context below. Find the cause and fix the code so that the command passes. "
        "Never delete, skip or weaken a test to make it pass. If the failure does not come "
        "from this repository's code (a network outage, a missing service), change nothing "
        "and finish with `could_not`, explaining why."
    )


def failure_context(test_command: str, exit_code: int, output: str) -> str:
    """The failing test run, as context for the agent (its output is untrusted text)."""
    return f"$ {test_command}\n(exit code {exit_code})\n\n{output[-OUTPUT_TAIL:]}"
