"""Host-side git: clone, the default branch's instructions and config, and the diff."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver.agent import repo as git_repo
from tests.agent.conftest import git, make_repo


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    repo = make_repo(
        tmp_path / "origin",
        {
            "app.py": "x = 1\n",
            ".resolver/instructions.md": "Run make test.\n",
            ".resolver/config.yml": "max_iterations: 7\n",
        },
    )
    git(repo, "checkout", "-qb", "pr")
    (repo / ".resolver/config.yml").write_text("max_iterations: 700\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e.x", "commit", "-qam", "raise")
    git(repo, "checkout", "-q", "main")
    return repo


def test_a_pull_request_branch_reads_the_default_branchs_config(
    origin: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "work"
    git_repo.clone(str(origin), clone, branch="pr")
    ref = git_repo.default_ref(clone)
    assert ref == "origin/main"
    assert (clone / ".resolver/config.yml").read_text() == "max_iterations: 700\n"
    assert git_repo.repo_config(clone, ref) == {"max_iterations": 7}
    assert git_repo.repo_instructions(clone, ref) == "Run make test.\n"
    assert git_repo.show(clone, ref, "missing.md") is None


def test_bad_config_is_explained(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "bad", {".resolver/config.yml": "- a list\n"})
    with pytest.raises(git_repo.RepoError, match="must be a mapping"):
        git_repo.repo_config(repo, "HEAD")


def test_diff_has_new_and_changed_files_but_no_caches(origin: Path, tmp_path: Path) -> None:
    clone = tmp_path / "work"
    git_repo.clone(str(origin), clone)
    (clone / "app.py").write_text("x = 2\n")
    (clone / "new.py").write_text("y = 1\n")
    (clone / "__pycache__").mkdir()
    (clone / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00junk")
    index_before = (clone / ".git" / "index").read_bytes()
    diff = git_repo.working_diff(clone)
    assert "-x = 1\n+x = 2" in diff and "+++ b/new.py" in diff
    assert "pycache" not in diff
    assert (clone / ".git" / "index").read_bytes() == index_before


def test_clone_failure_names_the_step(tmp_path: Path) -> None:
    with pytest.raises(git_repo.RepoError, match="git clone failed"):
        git_repo.clone(str(tmp_path / "nowhere"), tmp_path / "work")
