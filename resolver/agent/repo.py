"""Git on the host: cloning a job's repository and reading what its default branch says.

These run on the host, never in the sandbox. Repository instructions and config are read
from the default branch, so a pull request cannot rewrite the agent's instructions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Final

import yaml

INSTRUCTIONS_PATH: Final = ".resolver/instructions.md"
CONFIG_PATH: Final = ".resolver/config.yml"
GIT_TIMEOUT: Final = 600
# Never part of a change unless the repository already tracks them.
UNTRACKED_JUNK: Final = ("__pycache__/", "*.pyc", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/")


class RepoError(Exception):
    """A git step failed; the message says which and why."""


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    # The workspace belongs to the sandbox user, so git's ownership check is waived here.
    argv = ["git", "-c", "safe.directory=*", "-C", str(repo), *args]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        timeout=GIT_TIMEOUT,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})},
    )
    if done.returncode != 0:
        raise RepoError(f"git {args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def clone(
    source: str, dest: Path, branch: str | None = None, env: dict[str, str] | None = None
) -> None:
    """Clone `source` (a path or URL) into a fresh `dest`, on `branch` if given. `env` carries
    the forge's auth for this one command (`Forge.git_env`); nothing is written to disk."""
    remove(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    local = Path(source).expanduser()
    origin = str(local.resolve()) if local.exists() else source
    extra = ["--branch", branch] if branch else []
    git(dest.parent, "clone", "--quiet", "--no-hardlinks", *extra, "--", origin, str(dest), env=env)


def remote_branch_exists(repo: Path, branch: str, env: dict[str, str] | None = None) -> bool:
    """Whether `origin` has `branch` now (asked over the network, not from the clone's refs)."""
    out = git(repo, "ls-remote", "--heads", "origin", f"refs/heads/{branch}", env=env)
    return bool(out.strip())


def remove(path: Path) -> None:
    """Delete a workspace; a missing one is already gone."""
    if path.exists():
        shutil.rmtree(path)


def default_ref(repo: Path) -> str:
    """`origin/<default branch>`, or HEAD for a clone whose origin names no default."""
    try:
        return git(repo, "rev-parse", "--abbrev-ref", "origin/HEAD").strip()
    except RepoError:
        return "HEAD"


def show(repo: Path, ref: str, path: str) -> str | None:
    """The file's text at `ref`, or None when the tree has no such file."""
    if not git(repo, "ls-tree", "--name-only", ref, "--", path).strip():
        return None
    return git(repo, "show", f"{ref}:{path}")


def repo_instructions(repo: Path, ref: str) -> str | None:
    return show(repo, ref, INSTRUCTIONS_PATH)


def repo_config(repo: Path, ref: str) -> dict[str, Any]:
    """`.resolver/config.yml` from `ref` as a mapping ({} when absent)."""
    text = show(repo, ref, CONFIG_PATH)
    if text is None:
        return {}
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise RepoError(f"{CONFIG_PATH} is not valid YAML: {error}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RepoError(f"{CONFIG_PATH} must be a mapping")
    return data


def working_diff(repo: Path) -> str:
    """Every change in the working tree against HEAD, new files included, ignored ones not.

    A scratch copy of the index takes the intent-to-add entries, so the workspace's own index
    (owned by the sandbox user) is left as the agent left it. Untracked caches are skipped even
    where the repository does not ignore them.
    """
    with tempfile.TemporaryDirectory() as scratch:
        index, excludes = Path(scratch) / "index", Path(scratch) / "excludes"
        source = repo / ".git" / "index"
        if source.exists():
            shutil.copyfile(source, index)
        excludes.write_text("\n".join(UNTRACKED_JUNK) + "\n")
        env = {"GIT_INDEX_FILE": str(index)}
        exclude = f"core.excludesFile={excludes}"
        git(repo, "-c", exclude, "add", "--intent-to-add", "--all", ".", env=env)
        return git(repo, "diff", "--no-color", "--no-ext-diff", "HEAD", env=env)
