"""The instruction files a repository already has, read from its default branch as data.

In this order, later ones read last (so, where they disagree, the more specific wins):
1. `AGENTS.md` at the root, then the nearest nested `AGENTS.md` above each path the request
   names (or, on a follow-up, each path the branch changed);
2. `CLAUDE.md`; 3. `.github/copilot-instructions.md`; 4. `.openhands/microagents/repo.md`;
5. `.resolver/instructions.md`.

Only regular files of the default branch's tree are read (a symlink is skipped, never followed;
the branch under review cannot change them), each cut at MAX_FILE_CHARS and all of them at
MAX_TOTAL_CHARS. The prompt fences each one as user-written text.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Final

from resolver.agent import git as git_repo
from resolver.agent.task import InstructionFile

AGENTS: Final = "AGENTS.md"
OTHER_FILES: Final = (
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    ".openhands/microagents/repo.md",
    ".resolver/instructions.md",
)
MAX_FILE_CHARS: Final = 12_000
MAX_TOTAL_CHARS: Final = 30_000
MAX_PATHS: Final = 20
MAX_NESTED: Final = 5
MAX_DEPTH: Final = 32
MAX_PATH_CHARS: Final = 1024
# A relative path with at least one folder, as people write them in a request.
_PATH: Final = re.compile(r"(?<![\w/.-])(?:\./|/workspace/)?((?:[\w.-]+/)+[\w.-]+)")


def paths_named(texts: Iterable[str | None]) -> list[str]:
    """Repository paths the texts mention (`src/app/main.py`, `./docs/`), at most MAX_PATHS."""
    found: list[str] = []
    for text in texts:
        for match in _PATH.finditer(text or ""):
            path = match.group(1).strip("/")
            if _usable(path) and ".." not in path.split("/") and path not in found:
                found.append(path)
    return found[:MAX_PATHS]


def _usable(path: str) -> bool:
    """Whether a path is one to look under: one deeper or longer than any repository's is not
    (each of its folders is one more name for git to look up, all in one command line)."""
    return path.count("/") < MAX_DEPTH and len(path) <= MAX_PATH_CHARS


def nested_candidates(path: str) -> list[str]:
    """The `AGENTS.md` files that could hold for `path`, nearest first (the root excluded)."""
    folder = posixpath.dirname(path) if "." in posixpath.basename(path) else path
    candidates = []
    while folder and folder not in (".", "/"):
        candidates.append(f"{folder}/{AGENTS}")
        folder = posixpath.dirname(folder)
    return candidates


def read_instructions(
    clone: git_repo.Clone, ref: str, paths: Iterable[str]
) -> tuple[InstructionFile, ...]:
    """The instruction files at `ref` (the default branch), in the documented order."""
    nearest = [nested_candidates(path) for path in paths if _usable(path)]
    wanted = [AGENTS, *(c for found in nearest for c in found), *OTHER_FILES]
    blobs = git_repo.regular_files(clone, ref, wanted)
    nested = []
    for candidates in nearest:
        chosen = next((c for c in candidates if c in blobs), None)
        if chosen is not None and chosen not in nested:
            nested.append(chosen)
    order = [AGENTS, *nested[:MAX_NESTED], *OTHER_FILES]
    return _within_caps(clone, [(path, blobs[path]) for path in order if path in blobs])


def _within_caps(
    clone: git_repo.Clone, found: list[tuple[str, str]]
) -> tuple[InstructionFile, ...]:
    files: list[InstructionFile] = []
    left = MAX_TOTAL_CHARS
    for path, blob in found:
        text = git_repo.read_blob(clone, blob)
        if text is None or not text.strip() or left <= 0:
            continue
        share = min(MAX_FILE_CHARS, left)
        files.append(InstructionFile(path, text[:share], cut=len(text) > share))
        left -= min(len(text), share)
    return tuple(files)
