"""The web app against the GitHub stand-in: people sign in through GitHub's OAuth web flow,
and what they may see is what their own token may read there.

    ada    the requester of the jobs below (a linked Resolver user), no access on GitHub
    rita   may read octo/secret          wendy  may push to octo/secret
    nick   may read nothing private      root   an admin (RESOLVER_ADMINS names its id)
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.testclient import TestClient

from integrations.github.standin.api import GitHubAPI
from tests.conftest import reset_caches

CLIENT_ID = "Iv1.web-test"
CLIENT_SECRET = "web-test-client-secret"
SECRET_REPO = "octo/secret"
PUBLIC_URL = "http://testserver"
ROOT_ID = 4001
"""The admin root's numeric GitHub id, the one RESOLVER_ADMINS names."""


@pytest.fixture(scope="session")
def public_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem.decode()


@pytest.fixture
def forge(resolver_env, monkeypatch: pytest.MonkeyPatch, public_pem: str) -> Iterator[GitHubAPI]:
    """The GitHub stand-in with an OAuth client for Resolver and a private repository."""
    api = GitHubAPI(app_id="1", public_key=public_pem)
    api.add_oauth_app(CLIENT_ID, CLIENT_SECRET)
    api.user_ids["root"] = ROOT_ID
    api.add_repo(
        SECRET_REPO,
        clone_url=f"{api.web_url}/{SECRET_REPO}.git",
        private=True,
        collaborators={"rita": "read", "wendy": "write"},
    )
    settings = {
        "RESOLVER_GITHUB_API_URL": api.base_url,
        "RESOLVER_GITHUB_WEB_URL": api.web_url,
        "RESOLVER_GITHUB_CLIENT_ID": CLIENT_ID,
        "RESOLVER_GITHUB_CLIENT_SECRET": CLIENT_SECRET,
        "RESOLVER_PUBLIC_URL": PUBLIC_URL,
        "RESOLVER_ADMINS": f"github:id:{ROOT_ID}",
    }
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
        resolver_env.vars[key] = value
    reset_caches()
    yield api
    api.close()


@pytest.fixture
def app(forge: GitHubAPI):
    from resolver.app import create_app

    return create_app()


def browser(app) -> TestClient:
    return TestClient(app, base_url=PUBLIC_URL, follow_redirects=False)


def sign_in(client: TestClient, forge: GitHubAPI, login: str, next_path: str = "/jobs") -> str:
    """GitHub's web flow as a browser walks it; returns where Resolver sends them after."""
    forge.sign_in_as(login)
    start = client.get("/signin/github", params={"next": next_path})
    assert start.status_code == 302, start.text
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    assert approved.status_code == 302, approved.text
    back = urlsplit(approved.headers["location"])
    done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 303, done.text
    return done.headers["location"]


def csrf_of(client: TestClient, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200, page.text
    marker = 'name="csrf" value="'
    start = page.text.index(marker) + len(marker)
    return page.text[start : page.text.index('"', start)]
