"""A page that writes while the database is locked (an upgrade's write transaction on SQLite)
is a 503 "try again shortly" with Retry-After, not a 500, and writes nothing."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
from sqlalchemy import func, select
from starlette.testclient import TestClient

from integrations.github.standin.api import GitHubAPI
from resolver.store.db import session_scope
from resolver.store.models import WebSession
from tests.conftest import ResolverEnv
from tests.ingress.test_upgrading import write_locked
from tests.web.conftest import PUBLIC_URL, sign_in


def sessions() -> int:
    with session_scope() as session:
        return session.scalar(select(func.count()).select_from(WebSession)) or 0


def test_a_sign_in_while_the_database_is_locked_is_503_and_opens_no_session(
    app, forge: GitHubAPI, resolver_env: ResolverEnv
) -> None:
    client = TestClient(
        app, base_url=PUBLIC_URL, follow_redirects=False, raise_server_exceptions=False
    )
    forge.sign_in_as("root")
    start = client.get("/signin/github")
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    back = urlsplit(approved.headers["location"])
    with write_locked(resolver_env.database_url):
        done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 503, done.text
    assert done.headers["retry-after"] == "5"
    assert "Try again shortly" in done.text
    assert sessions() == 0
    assert sign_in(client, forge, "root") == "/jobs"
    assert sessions() == 1
