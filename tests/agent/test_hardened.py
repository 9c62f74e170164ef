"""Git on the host, hardened (agent/hardened.py), run for real: nothing of the worker's
environment reaches git but PATH and the network settings, a credential passed for one command
stays with it, a repository's hooks never run, only the repository's own protocol is allowed,
and a failure names its step."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver.agent.hardened import RepoError, protocol_of, run_git
from tests.agent.conftest import make_repo

WHO = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def environment_git_sees(cwd: Path, **auth: str) -> dict[str, str]:
    """The environment of a program git starts (an alias), as NAME=value lines."""
    out = run_git("file", ["-c", "alias.e=!env", "e"], cwd=cwd, auth=auth or None).decode()
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def test_nothing_of_the_workers_environment_reaches_git_but_path_and_proxies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESOLVER_GITHUB_TOKEN", "ghs_worker_secret")
    monkeypatch.setenv("GIT_ASKPASS", "/usr/bin/false")
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    monkeypatch.setenv("https_proxy", "http://proxy.test:3128")
    seen = environment_git_sees(tmp_path)
    assert "ghs_worker_secret" not in "".join(seen.values())
    assert "GIT_ASKPASS" not in seen and seen.get("GIT_DIR") != "/somewhere/else"
    assert seen["https_proxy"] == "http://proxy.test:3128"
    assert seen["GIT_CONFIG_GLOBAL"] == "/dev/null" and seen["GIT_CONFIG_NOSYSTEM"] == "1"
    home = Path(seen["HOME"])
    assert home != Path.home() and list(home.iterdir()) == []


def test_a_credential_given_for_one_command_is_not_kept_for_the_next(tmp_path: Path) -> None:
    assert environment_git_sees(tmp_path, GIT_CONFIG_VALUE_0="token")["GIT_CONFIG_VALUE_0"] == (
        "token"
    )
    assert "GIT_CONFIG_VALUE_0" not in environment_git_sees(tmp_path)


def test_a_repositorys_own_hook_never_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    marker = tmp_path / "hook-ran"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    run_git("file", ["commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, env=WHO)
    assert not marker.exists()


def test_only_the_repositorys_own_protocol_is_allowed(tmp_path: Path) -> None:
    with pytest.raises(RepoError, match=r"git ls-remote failed: .*transport 'http' not allowed"):
        run_git("file", ["ls-remote", "http://127.0.0.1:1/repo.git"], cwd=tmp_path)


@pytest.mark.parametrize(
    ("source", "protocol"),
    [("https://forge.test/o/r.git", "https"), ("http://git.internal/o/r", "http")],
)
def test_a_url_names_its_protocol(source: str, protocol: str) -> None:
    assert protocol_of(source) == protocol


def test_a_local_path_is_the_file_protocol(tmp_path: Path) -> None:
    assert protocol_of(str(tmp_path)) == "file"
    assert protocol_of("relative/path/that/does/not/exist") == "file"


@pytest.mark.parametrize("source", ["ssh://git@forge.test/o/r.git", "ext::sh -c id", "git://h/r"])
def test_any_other_scheme_is_refused(source: str) -> None:
    with pytest.raises(RepoError, match="give a local path or an http"):
        protocol_of(source)


def test_output_past_the_limit_is_not_read(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"big.txt": "x" * 200_000})
    out = run_git("file", ["cat-file", "-p", "HEAD:big.txt"], cwd=repo, limit=1000)
    assert out == b"x" * 1000


def test_a_failure_names_the_step_and_gits_reason(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    with pytest.raises(RepoError, match=r"^git rev-parse failed: .*no-such-branch"):
        run_git("file", ["--git-dir", str(repo / ".git"), "rev-parse", "no-such-branch"], cwd=repo)
