"""Signing in with GitLab: its OAuth flow on the instance, and what a member may do on a
project (a Reporter reads, a Developer may stop)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from integrations.gitlab.standin.api import GitLabAPI
from tests.conftest import reset_caches
from tests.store.test_storage import new_job
from tests.web.conftest import PUBLIC_URL, browser, csrf_of

PROJECT = "group/app"
REPORTER, DEVELOPER = 20, 30


@pytest.fixture
def gitlab(resolver_env, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitLabAPI]:
    api = GitLabAPI()
    api.add_oauth_app("gl-client", "gl-secret")
    reporter, developer = api.add_user("rory"), api.add_user("devi")
    api.add_project(
        PROJECT, f"{api.url}/{PROJECT}.git", members={reporter: REPORTER, developer: DEVELOPER}
    )
    settings = {
        "RESOLVER_GITLAB_URL": api.url,
        "RESOLVER_GITLAB_CLIENT_ID": "gl-client",
        "RESOLVER_GITLAB_CLIENT_SECRET": "gl-secret",
        "RESOLVER_PUBLIC_URL": PUBLIC_URL,
    }
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    reset_caches()
    yield api
    api.close()


def _sign_in(client, api: GitLabAPI, username: str) -> None:
    api.sign_in_as(username)
    start = client.get("/signin/gitlab")
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    back = urlsplit(approved.headers["location"])
    assert client.get(f"{back.path}?{back.query}").status_code == 303


def test_gitlab_members_see_and_developers_stop(gitlab) -> None:
    from resolver.app import create_app

    app = create_app()
    job_id = new_job(source="gitlab", repo=PROJECT)
    for username, sees, stops in (
        ("rory", True, False),
        ("devi", True, True),
        ("eve", False, False),
    ):
        client = browser(app)
        _sign_in(client, gitlab, username)
        page = client.get(f"/jobs/{job_id}")
        assert (page.status_code == 200) is sees, username
        assert (">Stop<" in page.text) is stops, username
    token = csrf_of(client, "/jobs")
    assert client.post(f"/jobs/{job_id}/stop", data={"csrf": token}).status_code == 404
