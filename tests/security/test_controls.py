"""Positive controls: each vector, planted in a host-only repository, fires under plain git.

The host sequence is what the worker used to run on the agent's workspace: `add`, `diff`,
`checkout -B`, `commit` and `push` with the forge's auth header in the environment. A vector
that never fires here would prove nothing in the hostile-agent suite.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from integrations.standin.git_http import GitHttpServer, branch_head, create_bare_repo, run_git
from tests.security.conftest import SECRET_LINE, Listener, make_targets
from tests.security.vectors import HOOKS, Targets, plants

TOKEN = "ghs_control0000000000000000000000000000"
FILES = {"calc.py": "def add(a, b):\n    return a - b\n"}


def old_host_sequence(repo: Path, auth: dict[str, str]) -> None:
    """The commands the worker ran on the workspace before; failures are expected."""
    steps = [
        ["add", "--intent-to-add", "--all", "."],
        ["diff", "--no-color", "--no-ext-diff", "HEAD"],
        ["checkout", "-q", "-B", "resolver/1-fix"],
        ["add", "-A"],
        ["-c", "user.name=resolver", "-c", "user.email=r@x", "commit", "-q", "-m", "fix"],
        ["push", "-q", "--force", "origin", "HEAD:refs/heads/resolver/1-fix"],
    ]
    for step in steps:
        subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", str(repo), *step],
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **auth},
            capture_output=True,
            timeout=60,
            check=False,
        )


@pytest.fixture
def planted(
    tmp_path: Path, listener: Listener
) -> Callable[[str], tuple[Path, Targets, GitHttpServer, Path]]:
    """A host-only clone of a repository on an HTTP git server, with one vector planted."""
    servers: list[GitHttpServer] = []

    def plant(vector: str) -> tuple[Path, Targets, GitHttpServer, Path]:
        server = GitHttpServer(tmp_path / "git", tokens={TOKEN}).__enter__()
        servers.append(server)
        create_bare_repo(server.root, "octo/widgets", FILES)
        other = create_bare_repo(tmp_path / "other", "octo/secrets", {"key.pem": "private\n"})
        targets = make_targets(tmp_path, listener, str(other), other / "objects")
        repo = tmp_path / "work"
        auth = auth_env(server)
        run_git("clone", "-q", server.url_for("octo/widgets"), str(repo), env=auth_env_full(auth))
        (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
        done = subprocess.run(
            ["bash", "-c", plants(targets)[vector]], cwd=repo, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return repo, targets, server, other

    yield plant
    for server in servers:
        server.__exit__(None, None, None)


def auth_env(server: GitHttpServer) -> dict[str, str]:
    basic = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.{server.base_url}/.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
    }


def auth_env_full(auth: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **auth}


def marks(targets: Targets) -> set[str]:
    return {path.name for path in targets.marks.iterdir()}


@pytest.mark.parametrize(
    ("vector", "expected"),
    [
        ("hooks", {f"hook-{hook}" for hook in HOOKS}),
        ("hooks_path", {"hooks-path"}),
        ("fsmonitor", {"fsmonitor"}),
        ("filter", {"filter", "textconv"}),
        ("gpg", {"gpg"}),
        ("ssh", {"ssh"}),
    ],
)
def test_code_runs_on_the_host_through_plain_git(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]],
    vector: str,
    expected: set[str],
) -> None:
    repo, targets, server, _ = planted(vector)
    old_host_sequence(repo, auth_env(server))
    assert expected <= marks(targets)


def test_a_credential_helper_and_askpass_run_when_git_asks(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]],
) -> None:
    repo, targets, _, _ = planted("credential")
    subprocess.run(
        ["git", "-C", str(repo), "credential", "fill"],
        input="protocol=http\nhost=127.0.0.1\n\n",
        text=True,
        capture_output=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "1"},
        timeout=30,
        check=False,
    )
    assert {"credential", "askpass"} <= marks(targets)


def test_a_proxy_in_the_config_receives_the_token(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]], listener: Listener
) -> None:
    repo, _, server, _ = planted("proxy")
    old_host_sequence(repo, auth_env(server))
    assert any(
        TOKEN in str(headers) or "Basic" in str(headers) for *_, headers in listener.requests
    )


def test_a_pushurl_moves_another_repository(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]],
) -> None:
    repo, _, server, other = planted("pushurl")
    old_host_sequence(repo, auth_env(server))
    assert branch_head(other, "resolver/1-fix") is not None


def test_a_worktree_in_the_config_commits_host_files(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]],
) -> None:
    repo, _, server, _ = planted("worktree")
    old_host_sequence(repo, auth_env(server))
    pushed = run_git(
        "--git-dir", str(server.bare_path("octo/widgets")), "show", "resolver/1-fix:.env"
    )
    assert SECRET_LINE in pushed


def test_alternates_reach_another_repositorys_objects(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]],
) -> None:
    repo, _, _, other = planted("alternates")
    secret_blob = run_git("--git-dir", str(other), "rev-parse", "main:key.pem").strip()
    assert run_git("-C", str(repo), "cat-file", "-p", secret_blob) == "private\n"


def test_a_symlinked_ref_reads_another_repositorys_branch(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]],
) -> None:
    repo, _, _, other = planted("refs")
    theirs = run_git("--git-dir", str(other), "rev-parse", "main").strip()
    listed = run_git("-C", str(repo), "for-each-ref", "--format=%(refname) %(objectname)")
    assert f"refs/heads/leak {theirs}" in listed


def test_a_symlinked_index_reads_a_host_file(
    planted: Callable[[str], tuple[Path, Targets, GitHttpServer, Path]],
) -> None:
    repo, targets, _, _ = planted("index")
    # What the old diff did first: copy the workspace's index, following the link.
    assert (repo / ".git" / "index").read_bytes() == targets.host_secret.read_bytes()
