"""git over HTTP with a GitLab token: `oauth2:<token>` as Basic auth, from the environment only."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from integrations.gitlab.client import git_auth_env
from integrations.gitlab.standin.api import Project
from integrations.standin.git_http import IDENTITY, GitHttpServer, branch_head, run_git
from resolver.contract.errors import PermanentCallbackError
from resolver.core.logs import redact
from tests.integrations.gitlab.conftest import BOT_TOKEN


def test_clone_and_push_with_the_token_in_the_environment_only(
    project: Project, git_server: GitHttpServer, tmp_path: Path
) -> None:
    env = git_auth_env(project.clone_url, BOT_TOKEN)
    work = tmp_path / "work"
    run_git("clone", "--quiet", project.clone_url, str(work), env=env)
    (work / "new.txt").write_text("new\n")
    run_git("add", "new.txt", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "New", cwd=work)
    run_git("push", "--quiet", "origin", "HEAD:refs/heads/resolver/1-new", cwd=work, env=env)

    assert branch_head(git_server.bare_path("group/widgets"), "resolver/1-new") is not None
    assert {r.user for r in git_server.requests if r.status == 200} == {"oauth2"}
    stored = "".join(
        p.read_text(errors="ignore") for p in (work / ".git").rglob("*") if p.is_file()
    )
    assert BOT_TOKEN not in stored
    assert env["GIT_CONFIG_VALUE_0"] not in stored
    with pytest.raises(subprocess.CalledProcessError):
        run_git("fetch", "--quiet", "origin", cwd=work)  # without the environment: no credential
    assert git_server.requests[-1].status == 401


def test_a_wrong_token_cannot_clone(
    project: Project, git_server: GitHttpServer, tmp_path: Path
) -> None:
    env = git_auth_env(project.clone_url, "glpat-wrong-token-value")
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run_git("clone", "--quiet", project.clone_url, str(tmp_path / "work"), env=env)
    assert "glpat-wrong-token-value" not in redact(failed.value.stderr)
    assert [r.status for r in git_server.requests] == [401]


def test_the_token_goes_to_that_repository_only() -> None:
    env = git_auth_env("https://gitlab.example.test:8443/group/widgets.git", "t0ken-value")
    assert env["GIT_CONFIG_COUNT"] == "1"
    key = "http.https://gitlab.example.test:8443/group/widgets.git.extraHeader"
    assert env["GIT_CONFIG_KEY_0"] == key
    assert env["GIT_CONFIG_VALUE_0"] == "Authorization: Basic b2F1dGgyOnQwa2VuLXZhbHVl"
    assert redact(env["GIT_CONFIG_VALUE_0"]) == "Authorization: Basic ******"
    assert "t0ken-value" not in redact("t0ken-value")


def test_credentials_in_the_clone_url_are_not_part_of_the_key() -> None:
    env = git_auth_env("http://old:creds@127.0.0.1:8080/a/b.git", "t0ken-value")
    assert env["GIT_CONFIG_KEY_0"] == "http.http://127.0.0.1:8080/a/b.git.extraHeader"


@pytest.mark.parametrize(
    "url", ["git@gitlab.example.test:group/widgets.git", "ssh://user:pw@gitlab.example.test/g/w"]
)
def test_a_token_is_never_sent_to_a_non_http_url(url: str) -> None:
    with pytest.raises(PermanentCallbackError, match="not HTTP") as failed:
        git_auth_env(url, "t0ken-value")
    assert "t0ken-value" not in str(failed.value)
    assert "pw" not in str(failed.value)
