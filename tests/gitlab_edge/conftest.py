"""Fixtures for the GitLab edge: a local GitLab API and a git server that accepts its tokens."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from integrations.gitlab.client import GitLabClient, git_auth_env
from resolver.config import Settings
from tests.support.git_http import IDENTITY, GitHttpServer, create_bare_repo, run_git
from tests.support.gitlab_api import DEVELOPER, GitLabAPI, Project

PROJECT = "group/widgets"
BOT = "resolver"
BOT_TOKEN = "glpat-" + "B0tT0ken" * 3
REPORTER, MAINTAINER = 20, 40


@pytest.fixture
def gitlab_api() -> Iterator[GitLabAPI]:
    api = GitLabAPI()
    api.add_token(BOT_TOKEN, BOT)
    yield api
    api.close()


@pytest.fixture
def git_server(tmp_path: Path, gitlab_api: GitLabAPI) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP; a password is accepted when the GitLab stand-in knows it."""
    with GitHttpServer(tmp_path / "git", accepts=gitlab_api.tokens.__contains__) as server:
        yield server


@pytest.fixture(scope="session")
def bare_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One bare repository of `group/widgets`, made once and copied for each test."""
    root = tmp_path_factory.mktemp("template")
    return create_bare_repo(root, PROJECT, {"README.md": "# widgets\n"})


@pytest.fixture
def project(gitlab_api: GitLabAPI, git_server: GitHttpServer, bare_template: Path) -> Project:
    """`group/widgets`: a real bare repository with issue #7; alice is a Developer, bob a
    Maintainer, carol a Reporter, dave no member."""
    bare = git_server.bare_path(PROJECT)
    shutil.copytree(bare_template, bare)
    project = gitlab_api.add_project(PROJECT, git_server.url_for(PROJECT), bare=bare)
    for name, level in (("alice", DEVELOPER), ("bob", MAINTAINER), ("carol", REPORTER)):
        gitlab_api.add_member(project, gitlab_api.add_user(name), level)
    gitlab_api.add_user("dave")
    gitlab_api.add_issue(project, 7, "The widget breaks")
    return project


def make_settings(gitlab_url: str) -> Settings:
    return Settings(
        _env_file=None,
        secret_keys=Fernet.generate_key().decode(),
        gitlab_url=gitlab_url,
        bot_name=BOT,
    )


@pytest.fixture
def settings(gitlab_api: GitLabAPI) -> Settings:
    return make_settings(gitlab_api.url)


@pytest.fixture
def client(settings: Settings, project: Project) -> GitLabClient:
    """The client acting as the bot."""
    return GitLabClient(settings, lambda: BOT_TOKEN)


def push_branch(project: Project, branch: str, tmp_path: Path) -> None:
    """Clone `group/widgets` as the bot, commit a file and push it as `branch`."""
    work = tmp_path / "push"
    env = git_auth_env(project.clone_url, BOT_TOKEN)
    run_git("clone", "--quiet", project.clone_url, str(work), env=env)
    (work / "fix.txt").write_text("fixed\n")
    run_git("add", "fix.txt", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "Fix", cwd=work)
    run_git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=work, env=env)
