"""Merging the base into a branch on the host's clone (`@bot rebase`), from objects alone: git's
merge of two commits, the merge commit, and the files that still hold conflict markers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from resolver.agent.git import MAX_SHOWN_BYTES, Clone, git, identity_env, raw, regular_files

# Lines git writes around a conflict; `=======` alone is too common in text to count.
CONFLICT_MARKERS: Final = (b"<<<<<<< ", b">>>>>>> ")


@dataclass(frozen=True)
class Merge:
    """A merge of two commits as git made it, objects only (no work tree, nothing run)."""

    tree: str
    """The merged tree; conflicted files hold git's markers."""
    conflicts: tuple[str, ...]


def merge_trees(clone: Clone, ours: str, theirs: str) -> Merge:
    """`git merge-tree --write-tree` of two commits on the host's clone (git ≥ 2.38): the
    merged tree and the paths that conflict."""
    argv = ["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs]
    # Exit 1 is an answer: the merge has conflicts.
    out = raw(clone, *argv, success=frozenset({0, 1})).decode(errors="replace")
    tree, *names = out.split("\0")
    return Merge(tree.strip(), tuple(dict.fromkeys(name for name in names if name)))


def commit_merge(
    clone: Clone, tree: str, parents: tuple[str, str], message: str, identity: tuple[str, str]
) -> str:
    """A merge commit of `tree` with both `parents` (the branch first), as `identity`."""
    ours, theirs = parents
    argv = ["commit-tree", tree, "-p", ours, "-p", theirs]
    return git(clone, *argv, env=identity_env(identity), stdin=message.encode()).strip()


def detach_head(clone: Clone, commit_sha: str) -> None:
    """Point the clone's HEAD at `commit_sha` (the sandbox checks out HEAD)."""
    git(clone, "update-ref", "--no-deref", "HEAD", commit_sha)


def with_markers(clone: Clone, tree: str, paths: Iterable[str]) -> list[str]:
    """Those `paths` whose file in `tree` still holds a conflict marker. Read as bytes with
    the size cap; a file too large to read counts as unresolved."""
    left = []
    for path, blob in regular_files(clone, tree, paths).items():
        if int(git(clone, "cat-file", "-s", blob).strip()) > MAX_SHOWN_BYTES:
            left.append(path)
            continue
        data = raw(clone, "cat-file", "blob", blob, limit=MAX_SHOWN_BYTES + 1)
        if any(line.startswith(CONFLICT_MARKERS) for line in data.splitlines()):
            left.append(path)
    return sorted(left)
