"""Fixtures for the GitLab edge: a local GitLab API and a git server that accepts its tokens;
for the provider, the process settings, stored tokens and the project of the recorded payloads."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet

from integrations import registry
from integrations.gitlab.client import GitLabClient, git_auth_env
from integrations.gitlab.events import NoteEvent
from integrations.gitlab.routes import on_note
from integrations.gitlab.settings import GitLabSettings
from integrations.gitlab.standin.api import DEVELOPER, GitLabAPI, Project
from integrations.standin.git_http import IDENTITY, GitHttpServer, create_bare_repo, run_git
from resolver.contract.inbound import Policy
from resolver.contract.triggers import dump_trigger
from resolver.core.settings import Settings, get_settings
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.conftest import ResolverEnv

PROJECT = "group/widgets"
BOT = "resolver"
BOT_TOKEN = "glpat-" + "B0tT0ken" * 3
REPORTER, MAINTAINER = 20, 40
FIXTURES = Path(__file__).parents[3] / "integrations" / "gitlab" / "fixtures"
# What the recorded payloads name: project 5, issue #17, merge request !1, user 1 (root).
RECORDED_PROJECT = "gitlab-org/gitlab-test"
THREAD = "6a9c1750b37d513a43987b574953fceb50b03ce7"
USER_TOKEN = "glpat-" + "Us3r" * 5


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
    values = {"secret_keys": Fernet.generate_key().decode(), "gitlab_url": gitlab_url}
    return registry.settings({**values, "bot_name": BOT}, env_file=False)


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


@pytest.fixture
def gitlab_env(
    resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch, gitlab_api: GitLabAPI
) -> Iterator[Settings]:
    """The process settings (database, vault keys) pointed at the GitLab stand-in."""
    monkeypatch.setenv("RESOLVER_GITLAB_URL", gitlab_api.url)
    monkeypatch.setenv("RESOLVER_BOT_NAME", BOT)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def store_bot_token(settings: Settings, token: str) -> None:
    """What `resolver tokens set --provider gitlab --installation <gitlab_url>` stores."""
    with session_scope() as session:
        installation = accounts.ensure_installation(
            session, "gitlab", GitLabSettings.of(settings).url
        )
        store_credential(
            session,
            Vault(settings.fernet_keys),
            provider="gitlab",
            kind="bot",
            secret=token,
            installation_id=installation.id,
        )


def store_user_token(settings: Settings, name: str, token: str) -> int:
    with session_scope() as session:
        user = accounts.add_user(session, name)
        store_credential(
            session,
            Vault(settings.fernet_keys),
            provider="gitlab",
            kind="pat",
            secret=token,
            user_id=user.id,
        )
        return user.id


@pytest.fixture
def recorded(gitlab_api: GitLabAPI, git_server: GitHttpServer) -> Project:
    """The project of the recorded payloads, with a real repository, issue #17 and MR !1."""
    bare = create_bare_repo(git_server.root, RECORDED_PROJECT)
    project = gitlab_api.add_project(
        RECORDED_PROJECT, git_server.url_for(RECORDED_PROJECT), id=5, bare=bare
    )
    root = gitlab_api.add_user("root", user_id=1)
    gitlab_api.add_member(project, root, DEVELOPER)
    gitlab_api.add_issue(project, 17, "Export fails")
    gitlab_api.add_merge_request(project, "feature", iid=1)
    return project


def trigger_of(fixture: str, text: str) -> dict[str, Any]:
    """The trigger context the route handler records for a real payload saying `text`, as
    it comes back from the job's JSON column."""
    payload = json.loads((FIXTURES / f"{fixture}.json").read_text())
    payload["object_attributes"]["note"] = text
    trigger = on_note(NoteEvent.model_validate(payload), Policy(BOT, BOT))
    assert trigger is not None
    context: dict[str, Any] = json.loads(json.dumps(dump_trigger(trigger.subject)))
    return context
