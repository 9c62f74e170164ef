"""Host-side merges for `@bot rebase`: git's merge of two commits from objects alone, the merge
commit, and the conflict markers a resolution may leave."""

from __future__ import annotations

from pathlib import Path

from resolver.agent import git as git_repo
from resolver.agent.merge import commit_merge, detach_head, merge_trees, with_markers
from sandbox import Change, ChangedFile
from tests.agent.conftest import git, make_repo

WHO = ("-c", "user.name=t", "-c", "user.email=t@e.x")
BOT = ("bot", "bot@users.noreply")


def commit(repo: Path, branch: str, files: dict[str, str]) -> None:
    git(repo, "checkout", "-q", branch)
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, *WHO, "commit", "-qm", f"change {', '.join(files)}")


def origin_with(tmp_path: Path, main: dict[str, str]) -> Path:
    """`main` and `resolver/x` both change `a.txt` from one base; `main` also `main`'s files."""
    repo = make_repo(tmp_path / "origin", {"a.txt": "one\ntwo\nthree\n", "b.txt": "b\n"})
    git(repo, "branch", "resolver/x")
    commit(repo, "resolver/x", {"a.txt": "one\nTWO\nthree\n"})
    commit(repo, "main", main)
    return repo


def test_a_clean_merge_is_a_tree_with_both_sides(tmp_path: Path) -> None:
    origin = origin_with(tmp_path, {"b.txt": "B\n"})
    clone = git_repo.clone(str(origin), tmp_path / "c", branch="resolver/x")
    ours, theirs = git_repo.head(clone), git_repo.git(clone, "rev-parse", "origin/main").strip()
    assert not git_repo.is_ancestor(clone, theirs, ours)
    merge = merge_trees(clone, ours, theirs)
    assert merge.conflicts == ()
    sha = commit_merge(clone, merge.tree, (ours, theirs), "Merge", BOT)
    assert git_repo.git(clone, "rev-parse", f"{sha}^1", f"{sha}^2").split() == [ours, theirs]
    assert git_repo.show(clone, sha, "a.txt") == "one\nTWO\nthree\n"
    assert git_repo.show(clone, sha, "b.txt") == "B\n"
    assert git_repo.is_ancestor(clone, theirs, sha) and git_repo.is_ancestor(clone, ours, sha)
    assert sorted(p.name for p in clone.path.iterdir()) == [".git"]  # still no work tree


def test_a_conflict_names_its_files_and_a_resolution_is_checked_for_markers(
    tmp_path: Path,
) -> None:
    origin = origin_with(tmp_path, {"a.txt": "one\n2\nthree\n", "b.txt": "B\n"})
    clone = git_repo.clone(str(origin), tmp_path / "c", branch="resolver/x")
    ours, theirs = git_repo.head(clone), git_repo.git(clone, "rev-parse", "origin/main").strip()
    merge = merge_trees(clone, ours, theirs)
    assert merge.conflicts == ("a.txt",)
    conflicted = git_repo.show(clone, merge.tree, "a.txt") or ""
    assert "<<<<<<< " in conflicted and ">>>>>>> " in conflicted
    assert with_markers(clone, merge.tree, merge.conflicts) == ["a.txt"]

    start = commit_merge(clone, merge.tree, (ours, theirs), "Merge", BOT)
    detach_head(clone, start)
    assert git_repo.head(clone) == start
    half = Change(files=(ChangedFile("a.txt", "100644", b"one\n<<<<<<< x\nTWO\n"),))
    half_tree = git_repo.apply_change(clone, start, half)
    assert half_tree is not None
    assert with_markers(clone, half_tree, merge.conflicts) == ["a.txt"]
    done = Change(files=(ChangedFile("a.txt", "100644", b"one\nTWO 2\nthree\n"),))
    tree = git_repo.apply_change(clone, start, done)
    assert tree is not None
    assert with_markers(clone, tree, merge.conflicts) == []
    # A resolution that deletes the file leaves no marker in it either.
    gone = git_repo.apply_change(clone, start, Change(deleted=("a.txt",)))
    assert gone is not None and with_markers(clone, gone, merge.conflicts) == []


def test_a_resolved_file_too_large_to_read_counts_as_unresolved(tmp_path: Path) -> None:
    origin = origin_with(tmp_path, {"a.txt": "one\n2\nthree\n"})
    clone = git_repo.clone(str(origin), tmp_path / "c", branch="resolver/x")
    big = b"x\n" * (git_repo.MAX_SHOWN_BYTES // 2 + 1)
    tree = git_repo.apply_change(
        clone, git_repo.head(clone), Change(files=(ChangedFile("a.txt", "100644", big),))
    )
    assert tree is not None
    assert with_markers(clone, tree, ("a.txt",)) == ["a.txt"]
