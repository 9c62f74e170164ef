"""Fixtures for the GitHub edge: the App's key, a local GitHub API and a git server tied to it.

Every request a test sends to the GitHub stand-in is checked against GitHub's published OpenAPI
description when the test ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from integrations import registry
from integrations.github.auth import authenticated_clone_url, installation_tokens
from integrations.github.standin.api import GitHubAPI, Repo, conformance_problems
from integrations.standin.git_http import IDENTITY, GitHttpServer, create_bare_repo, run_git
from resolver.core.settings import Settings

APP_ID = "424242"
INSTALLATION_ID = 77
REPO = "octo/widgets"
BOT = "resolver"


@dataclass(frozen=True)
class AppKey:
    private_pem: str
    public_pem: str


@pytest.fixture(scope="session")
def app_key() -> AppKey:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return AppKey(private.decode(), public.decode())


@pytest.fixture
def key_file(tmp_path: Path, app_key: AppKey) -> Path:
    path = tmp_path / "app.pem"
    path.write_text(app_key.private_pem)
    path.chmod(0o600)
    return path


def _checked(api: GitHubAPI) -> Iterator[GitHubAPI]:
    installation_tokens.clear()
    yield api
    api.close()
    installation_tokens.clear()
    problems = conformance_problems(api.requests)
    assert not problems, f"requests outside GitHub's OpenAPI description: {problems}"


@pytest.fixture
def github_api(app_key: AppKey) -> Iterator[GitHubAPI]:
    """The GitHub stand-in at the root of its server, as on api.github.com."""
    api = GitHubAPI(app_id=APP_ID, public_key=app_key.public_pem)
    api.add_installation(INSTALLATION_ID)
    yield from _checked(api)


@pytest.fixture
def git_server(tmp_path: Path, github_api: GitHubAPI) -> Iterator[GitHttpServer]:
    """Bare repositories over HTTP; a password is accepted when the GitHub stand-in knows it,
    for the repositories it may reach."""
    known, reaches = github_api.tokens.__contains__, github_api.may_reach_path
    with GitHttpServer(tmp_path / "git", accepts=known, reaches=reaches) as server:
        yield server


@pytest.fixture
def repo(github_api: GitHubAPI, git_server: GitHttpServer) -> Repo:
    """`octo/widgets`: a real bare repository, known to the API with its clone URL."""
    bare = create_bare_repo(git_server.root, REPO, {"README.md": "# widgets\n"})
    collaborators = {"alice": "admin", "bob": "write", "carol": "maintain", "dave": "triage"}
    return github_api.add_repo(
        REPO, git_server.url_for(REPO), collaborators=collaborators, bare=bare
    )


def make_settings(api_url: str, key_file: Path | None, **extra: object) -> Settings:
    values: dict[str, object] = {
        "secret_keys": Fernet.generate_key().decode(),
        "github_api_url": api_url,
        "github_app_id": APP_ID if key_file else None,
        "github_app_private_key_path": key_file,
        "bot_name": BOT,
        **extra,
    }
    return registry.settings(values, env_file=False)


@pytest.fixture
def settings(github_api: GitHubAPI, key_file: Path) -> Settings:
    return make_settings(github_api.base_url, key_file)


def push_branch(git_server: GitHttpServer, token: str, branch: str, tmp_path: Path) -> None:
    """Clone `octo/widgets` with `token`, commit a file and push it as `branch`."""
    work = tmp_path / "push"
    run_git("clone", "--quiet", authenticated_clone_url(git_server.url_for(REPO), token), str(work))
    (work / "fix.txt").write_text("fixed\n")
    run_git("add", "fix.txt", cwd=work)
    run_git(*IDENTITY, "commit", "--quiet", "-m", "Fix", cwd=work)
    run_git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=work)
