"""/admin keeps the credentials of repositories' remote MCP servers: stored into the vault,
bound to the origin of the server's URL, listed without their values, removed; bad input (a
URL a credential cannot go to among it) stores nothing; "Store" pressed twice at once keeps one
credential and answers both presses."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg
from sqlalchemy import event, select

from resolver.core.settings import get_settings
from resolver.onboarding import operator
from resolver.store.db import get_engine, session_scope
from resolver.store.mcp_credentials import mcp_credentials
from resolver.store.models import Credential
from resolver.store.vault import Vault
from tests.web.conftest import browser, csrf_of

VALUE = "Bearer mcp-admin-7f6e5d4c"


def _admin(app):  # type: ignore[no-untyped-def]
    client = browser(app)
    client.get(urlsplit(operator.operator_url(get_settings())).path)
    return client


def test_an_admin_stores_lists_and_removes_a_servers_credential(app, resolver_env) -> None:
    admin = _admin(app)
    form = {
        "repo": "acme/app",
        "server": "tracker",
        "url": "https://MCP.tracker.example/mcp",
        "header": "Authorization",
        "value": VALUE,
    }
    stored = admin.post("/admin/mcp", data={**form, "csrf": csrf_of(admin, "/admin")})
    assert stored.status_code == 303
    page = admin.get("/admin").text
    assert "Stored the Authorization header of acme/app" in page
    assert "for https://mcp.tracker.example." in page
    row = "<td>acme/app</td><td>tracker</td><td>Authorization</td>"
    assert f"{row}<td>https://mcp.tracker.example</td>" in page
    assert "mcp-admin" not in page
    assert b"mcp-admin" not in (resolver_env.tmp / "resolver.db").read_bytes()
    removed = admin.post(
        "/admin/mcp/remove",
        data={"repo": "acme/app", "server": "tracker", "csrf": csrf_of(admin, "/admin")},
    )
    assert removed.status_code == 303
    page = admin.get("/admin").text
    assert "Removed the credential" in page and "<td>tracker</td>" not in page


def test_bad_input_or_a_missing_form_token_stores_nothing(app) -> None:
    admin = _admin(app)
    bad = {"repo": "acme/app", "server": "Tracker!", "value": VALUE}
    assert (
        admin.post("/admin/mcp", data={**bad, "csrf": csrf_of(admin, "/admin")}).status_code == 303
    )
    page = admin.get("/admin").text
    assert "Nothing was stored: a server&#39;s name" in page
    for url, why in [
        ("http://mcp.tracker.example/mcp", "http://mcp.tracker.example is plain http"),
        ("", "give the server&#39;s URL"),
    ]:
        form = {"repo": "acme/app", "server": "tracker", "url": url, "value": VALUE}
        admin.post("/admin/mcp", data={**form, "csrf": csrf_of(admin, "/admin")})
        assert f"Nothing was stored: {why}" in admin.get("/admin").text
    assert "<td>acme/app</td>" not in admin.get("/admin").text
    no_csrf = admin.post("/admin/mcp", data={"repo": "a/b", "server": "t", "value": "x"})
    assert no_csrf.status_code == 403
    assert "<td>a/b</td>" not in admin.get("/admin").text
    stranger = browser(app).post("/admin/mcp", data={"repo": "a/b", "server": "t", "value": "x"})
    assert stranger.status_code in (303, 403)


@contextmanager
def _writes_held(url: str, writers: int) -> Iterator[None]:
    """Hold back every write to the credentials and their owners until `writers` statements
    writing them have started, then let them all go at once: each read what it read before
    any of them wrote, the worst a double click can do."""
    started = threading.Semaphore(0)

    def count(_conn, _cursor, statement: str, *_args) -> None:  # type: ignore[no-untyped-def]
        if statement.startswith(("INSERT INTO installations", "INSERT INTO credentials")):
            started.release()

    event.listen(get_engine(), "before_cursor_execute", count)
    if url.startswith("sqlite"):
        holder = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    else:
        holder = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
        holder.execute("LOCK TABLE installations, credentials IN SHARE MODE")
    try:
        yield
        for _ in range(writers):
            assert started.acquire(timeout=30), "a press never came to write"
    finally:
        holder.commit()
        holder.close()
        event.remove(get_engine(), "before_cursor_execute", count)


def test_store_pressed_twice_at_once_keeps_one_credential(app, resolver_env, backend) -> None:
    first = _admin(app)
    second = browser(app)
    second.cookies.update(first.cookies)  # the same admin's second tab
    token = csrf_of(first, "/admin")

    def press(tab, value: str, server: str) -> int:  # type: ignore[no-untyped-def]
        form = {"repo": "acme/app", "server": server, "url": "https://mcp.tracker.example/mcp"}
        return tab.post("/admin/mcp", data={**form, "value": value, "csrf": token}).status_code

    # The repository's first credential (its owner is made too), then another server's.
    for server in ("tracker", "wiki"):
        with ThreadPoolExecutor(2) as pool:
            with _writes_held(resolver_env.database_url, writers=2):
                presses = [
                    pool.submit(press, tab, f"Bearer {server}-{n}", server)
                    for n, tab in enumerate((first, second))
                ]
            assert [done.result(timeout=30) for done in presses] == [303, 303]
    assert press(first, "Bearer tracker-later", "tracker") == 303

    with session_scope() as session:
        rows = session.scalars(select(Credential.kind).order_by(Credential.kind)).all()
        stored = mcp_credentials(
            session, Vault(get_settings().fernet_keys), "acme/app", ("tracker", "wiki")
        )
    assert rows == ["tracker", "wiki"]
    assert stored["tracker"].value.reveal() == "Bearer tracker-later"
    assert stored["wiki"].value.reveal() in ("Bearer wiki-0", "Bearer wiki-1")
