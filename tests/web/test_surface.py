"""The web app's surface, as an attacker meets it: headers that keep its pages out of frames and
its scripts its own, stored URLs that link only to the web, forms with a size cap, ids that are
ids, logs that never name a token, and a JSON API that shows no more than the page."""

from __future__ import annotations

import asyncio
import logging

import pytest
from sqlalchemy import select

from resolver.store import accounts, jobs
from resolver.store.db import session_scope
from resolver.store.models import Job, Schedule
from tests.conftest import reset_caches
from tests.store.test_storage import new_job
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in

FRAMING = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


def _policy(response) -> dict[str, str]:
    """The CSP's directives, by name."""
    found = response.headers.get("content-security-policy", "")
    parts = (part.strip().split(" ", 1) for part in found.split(";") if part.strip())
    return {part[0]: part[1] if len(part) > 1 else "" for part in parts}


def _protected(response) -> None:
    for name, value in FRAMING.items():
        assert response.headers.get(name) == value, (response.request.url, name)
    policy = _policy(response)
    assert policy["default-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["form-action"].startswith("'self'")
    assert "unsafe-inline" not in response.headers["content-security-policy"]


def test_every_page_carries_the_headers(app, forge) -> None:
    client = browser(app)
    for path in ("/signin", "/jobs", "/nowhere", "/static/site.css"):
        _protected(client.get(path))
    _protected(client.post("/signout"))
    sign_in(client, forge, "root")
    for path in ("/jobs", "/admin", "/me", "/schedules", "/jobs/123456", "/api/jobs"):
        page = client.get(path)
        _protected(page)
        assert "strict-transport-security" not in page.headers  # the public URL is http
        assert _policy(page)["form-action"] == "'self'"
    # Only /setup may send a form to GitHub: the App manifest is posted there by the browser.
    assert forge.web_url in _policy(client.get("/setup"))["form-action"]


def test_the_webhook_routes_are_left_as_they_were(app, forge) -> None:
    answer = browser(app).post("/webhooks/github", content=b"{}")
    assert answer.status_code in (401, 404)
    assert not {"content-security-policy", *FRAMING} & set(answer.headers)


def test_an_https_site_asks_browsers_to_stay_on_https(forge, monkeypatch) -> None:
    monkeypatch.setenv("RESOLVER_PUBLIC_URL", "https://resolver.example")
    reset_caches()
    from resolver.app import create_app

    page = browser(create_app()).get("/signin")
    assert page.headers["strict-transport-security"].startswith("max-age=")
    _protected(page)


def _finished(pr_url: str, url: str) -> int:
    job_id = new_job(repo=SECRET_REPO, trigger={"url": url})
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        job.state, job.outcome, job.pr_url = "succeeded", "answered", pr_url
    return job_id


def test_only_web_urls_are_rendered_as_links(app, forge) -> None:
    hostile = _finished("javascript:alert(1)", "JaVaScRiPt:alert(2)")
    tabbed = _finished("java\tscript:alert(3)", " javascript:alert(4)")
    fine = _finished(
        "https://github.com/octo/secret/pull/7", "https://github.com/octo/secret/issues/1"
    )
    client = browser(app)
    sign_in(client, forge, "root")
    pages = [client.get("/jobs").text] + [client.get(f"/jobs/{i}").text for i in (hostile, tabbed)]
    for text in pages:
        assert "script:alert" not in text.lower().replace("\t", "")
    shown = client.get(f"/jobs/{hostile}").text
    assert "where it was asked" in shown and "pull request" in shown  # as text
    good = client.get(f"/jobs/{fine}").text
    assert 'href="https://github.com/octo/secret/pull/7"' in good
    assert 'href="https://github.com/octo/secret/issues/1"' in good


def _asgi_post(app, path: str, chunks: int, chunk: bytes) -> tuple[int, int]:
    """POST `chunks` chunks of `chunk` to `path` with no Content-Length, as a client that
    streams; the status and how many body bytes the app pulled."""
    pulled, status = 0, 0
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"transfer-encoding", b"chunked"),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }
    sent = 0

    async def receive() -> dict:
        nonlocal sent, pulled
        if sent == chunks:
            return {"type": "http.disconnect"}
        sent += 1
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": sent < chunks}

    async def send(message: dict) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    asyncio.run(app(scope, receive, send))
    return status, pulled


def test_a_big_form_is_refused_before_it_is_read(app, forge) -> None:
    six_mb = 6 * 1024 * 1024
    status, pulled = _asgi_post(app, "/signout", 96, b"a" * (64 * 1024))
    assert status == 413
    assert pulled <= 2 * 64 * 1024 < six_mb
    client = browser(app)
    declared = client.post("/signout", content=b"csrf=x&" + b"a" * six_mb)
    assert declared.status_code == 413
    files = client.post("/signout", files={"f": ("a.txt", b"hello")}, data={"csrf": "x"})
    assert files.status_code == 415
    sign_in(client, forge, "wendy")
    job_id = new_job(repo=SECRET_REPO)
    csrf = csrf_of(client, "/jobs")
    big = client.post(f"/jobs/{job_id}/stop", data={"csrf": csrf, "pad": "a" * 70_000})
    assert big.status_code == 413
    assert _state(job_id) == "queued"
    assert client.post(f"/jobs/{job_id}/stop", data={"csrf": csrf}).status_code == 303


def _state(job_id: int) -> str:
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job.state


ODD_IDS = ["%C2%B2", "²", "9999999999999999999999999", "1e3", "-1", "0x10", "12%0A", "%EF%BC%91"]


@pytest.mark.parametrize("odd", ODD_IDS)
def test_an_odd_id_is_not_found(app, forge, odd) -> None:
    client = browser(app)
    sign_in(client, forge, "root")
    csrf = csrf_of(client, "/jobs")
    for path in (f"/jobs/{odd}", f"/jobs/{odd}/events", f"/api/jobs/{odd}"):
        assert client.get(path).status_code == 404, path
    for path in (
        f"/jobs/{odd}/stop",
        f"/jobs/{odd}/rerun",
        f"/schedules/{odd}/run",
        f"/admin/links/{odd}/revoke",
        f"/me/unlink/{odd}",
    ):
        assert client.post(path, data={"csrf": csrf}).status_code == 404, path
    assert client.get("/jobs", params={"before": odd}).status_code == 400
    assert client.get("/api/jobs", params={"limit": odd}).status_code == 400
    with session_scope() as session:
        assert session.scalars(select(Job)).all() == []
        assert session.scalars(select(Schedule)).all() == []


PAST_FOUR_BYTES = "2147483648"  # an id by its digits, which no row's four-byte key can be


def test_an_id_past_a_four_byte_key_is_not_found_on_either_database(app, forge, backend) -> None:
    """PostgreSQL refuses such a number in a query where SQLite finds no row: neither is a 500."""
    client = browser(app)
    sign_in(client, forge, "root")
    csrf = csrf_of(client, "/jobs")
    big = PAST_FOUR_BYTES
    for path in (f"/jobs/{big}", f"/jobs/{big}/events", f"/api/jobs/{big}"):
        assert client.get(path).status_code == 404, path
    for path in (f"/jobs/{big}/stop", f"/schedules/{big}/run", f"/admin/users/{big}/forget"):
        assert client.post(path, data={"csrf": csrf}).status_code == 404, path
    assert client.get("/jobs", params={"before": big}).status_code == 400
    assert client.get("/api/jobs", params={"before": big}).status_code == 400


def test_a_nul_character_in_a_query_or_a_form_is_refused(app, forge, backend) -> None:
    """PostgreSQL refuses a NUL in text: it never reaches a query, on either database."""
    client = browser(app)
    sign_in(client, forge, "root")
    csrf = csrf_of(client, "/jobs")
    for name in ("repo", "state", "source", "requester", "schedule"):
        assert client.get("/jobs", params={name: "a\x00b"}).status_code == 400, name
    form = {"csrf": csrf, "repo": "o/r\x00", "server": "s", "value": "v"}
    assert client.post("/admin/mcp", data=form).status_code == 400
    assert client.post("/admin/mcp/remove", data=form).status_code == 400
    assert client.get("/jobs", params={"repo": "a"}).status_code == 200


def test_a_refused_post_logs_the_route_and_not_the_token(app, forge, caplog) -> None:
    caplog.set_level(logging.INFO)
    token = "v1.private-link-token-ABCDEFGH"
    client = browser(app)
    sign_in(client, forge, "nick")
    assert client.post(f"/link/{token}", data={"csrf": "wrong"}).status_code == 403
    ours = [record for record in caplog.records if record.name.startswith("resolver.")]
    logged = "".join(f"{record.getMessage()} {vars(record)}" for record in ours)
    assert "web.csrf_refused" in logged
    assert token not in logged
    assert "/link/{token}" in logged


def test_the_api_shows_what_the_page_shows(app, forge) -> None:
    from resolver.core.logs import register_secret
    from resolver.core.redact import Redactor

    known = "the-operators-llm-key-5e6f7a8b"
    job_id = new_job(repo=SECRET_REPO)
    with session_scope() as session:
        prompt = {"system": "You are the resolver. SYSTEM-PROMPT-WORDS", "task": "fix it"}
        jobs.append_event(session, job_id, "task", prompt, Redactor())
        said = {"step": 1, "content": f"I used {known} to call the model"}
        jobs.append_event(session, job_id, "message", said, Redactor())
    register_secret(known)
    client = browser(app)
    sign_in(client, forge, "rita")
    page = client.get(f"/jobs/{job_id}").text
    api = client.get(f"/api/jobs/{job_id}")
    assert api.status_code == 200
    kinds = [event["kind"] for event in api.json()["trajectory"]]
    assert kinds == ["message"]
    for shown in (page, api.text):
        assert "SYSTEM-PROMPT-WORDS" not in shown
        assert known not in shown
        assert "to call the model" in shown


def test_the_api_gives_a_person_as_many_of_their_jobs_as_asked_and_pages_on(app, forge) -> None:
    """More than a page of the job list: `limit` is what comes back, `before` goes on."""
    forge.sign_in_as("ada", user_id=583231)
    with session_scope() as session:
        user_id = accounts.add_user(session, "ada").id
        accounts.link_identity(session, "ada", "github", "583231", login="ada")
    ids = [new_job(repo="octo/private-elsewhere", requester_id=user_id) for _ in range(70)]
    client = browser(app)
    sign_in(client, forge, "ada")
    shown = [job["id"] for job in client.get("/api/jobs", params={"limit": 100}).json()]
    assert shown == ids[::-1]
    older = [job["id"] for job in client.get("/api/jobs?limit=5&before=20").json()]
    assert older == ids[18:13:-1]
