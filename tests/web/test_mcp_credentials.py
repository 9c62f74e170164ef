"""/admin keeps the credentials of repositories' remote MCP servers: stored into the vault,
bound to the origin of the server's URL, listed without their values, removed; bad input (a
URL a credential cannot go to among it) stores nothing."""

from __future__ import annotations

from urllib.parse import urlsplit

from resolver.core.settings import get_settings
from resolver.onboarding import operator
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
