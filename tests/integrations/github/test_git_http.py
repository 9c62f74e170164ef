"""The git server stand-in: real clone and push over HTTP, and only with an accepted token."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from integrations.standin.git_http import (
    IDENTITY,
    GitHttpServer,
    branch_head,
    create_bare_repo,
    run_git,
)

TOKEN = "gho_" + "a1" * 20


def with_password(url: str, password: str | None) -> str:
    return url if password is None else url.replace("http://", f"http://x-access-token:{password}@")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitHttpServer]:
    with GitHttpServer(tmp_path / "git", {TOKEN}) as server:
        create_bare_repo(server.root, "octo/tools", {"README.md": "tools\n", "src/a.py": "A = 1\n"})
        yield server


def test_the_right_token_clones_and_pushes(server: GitHttpServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    run_git("clone", "--quiet", with_password(server.url_for("octo/tools"), TOKEN), str(work))
    assert (work / "src" / "a.py").read_text() == "A = 1\n"

    (work / "src" / "a.py").write_text("A = 2\n")
    run_git(*IDENTITY, "commit", "--quiet", "-am", "Bump A", cwd=work)
    run_git("push", "--quiet", "origin", "HEAD:refs/heads/resolver/7-bump-a", cwd=work)

    bare = server.bare_path("octo/tools")
    pushed = branch_head(bare, "resolver/7-bump-a")
    assert pushed == run_git("rev-parse", "HEAD", cwd=work).strip()
    assert run_git("show", f"{pushed}:src/a.py", cwd=bare) == "A = 2\n"
    assert [r.user for r in server.requests if r.status == 200] and all(
        r.user == "x-access-token" for r in server.requests if r.status == 200
    )


@pytest.mark.parametrize("password", ["wrong-token", None], ids=["wrong", "missing"])
def test_a_wrong_or_missing_token_cannot_clone(
    server: GitHttpServer, tmp_path: Path, password: str | None
) -> None:
    url = with_password(server.url_for("octo/tools"), password)
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run_git("clone", "--quiet", url, str(tmp_path / "work"))
    assert "Authentication failed" in failed.value.stderr or "could not read" in failed.value.stderr
    assert not (tmp_path / "work").exists()
    assert {r.status for r in server.requests} == {401}


def test_a_wrong_token_cannot_push(server: GitHttpServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    run_git("clone", "--quiet", with_password(server.url_for("octo/tools"), TOKEN), str(work))
    (work / "new.txt").write_text("new\n")
    run_git("add", "new.txt", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "Add new", cwd=work)
    wrong = with_password(server.url_for("octo/tools"), "wrong-token")
    with pytest.raises(subprocess.CalledProcessError):
        run_git("push", "--quiet", wrong, "HEAD:refs/heads/sneaky", cwd=work)
    assert branch_head(server.bare_path("octo/tools"), "sneaky") is None


def test_a_large_push_streams_through(server: GitHttpServer, tmp_path: Path) -> None:
    """Above http.postBuffer git sends a chunked body; the server must decode it."""
    work = tmp_path / "work"
    run_git("clone", "--quiet", with_password(server.url_for("octo/tools"), TOKEN), str(work))
    (work / "blob.bin").write_bytes(os.urandom(3_000_000))
    run_git("add", "blob.bin", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "Add blob", cwd=work)
    run_git("push", "--quiet", "origin", "HEAD:refs/heads/big", cwd=work)
    assert branch_head(server.bare_path("octo/tools"), "big") is not None
