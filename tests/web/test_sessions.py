"""A web session lives on the server: a cookie opens pages only while its session does. It
ends at sign out (a copy of the cookie with it), everywhere at once from `/me`, when an admin
revokes the person's link or the forge refuses their token, after its absolute lifetime from
sign-in (pressing buttons does not extend it) and after an idle spell; its key rotates at
sign-in. The operator's link opens one session."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

from resolver.core.settings import get_settings
from resolver.onboarding import operator
from resolver.store import accounts
from resolver.store.db import session_scope
from tests.conftest import reset_caches
from tests.store.test_storage import new_job
from tests.support.serving import served_handler
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in
from tests.web.test_oauth_http import HUGE, huge_answer

ADA_ID = 583231
COOKIE = "resolver_session"


def _signed_in(app, forge, login: str) -> TestClient:
    client = browser(app)
    if login == "ada":
        forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, login)
    return client


def _copy(client: TestClient) -> str:
    """The session cookie as someone who copied it would hold it."""
    value = client.cookies.get(COOKIE)
    assert value, "signed in"
    return value


def _opens(app, cookie: str, path: str = "/me") -> bool:
    """Whether a browser holding only `cookie` gets `path` (else it is sent to sign in)."""
    answer = browser(app).get(path, headers={"cookie": f"{COOKIE}={cookie}"})
    assert answer.status_code in (200, 303), answer.text
    return answer.status_code == 200


def _app_with(monkeypatch: pytest.MonkeyPatch, **env: str):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    reset_caches()
    from resolver.app import create_app

    return create_app()


def test_a_cookie_copied_before_sign_out_opens_nothing_after(app, forge) -> None:
    client = _signed_in(app, forge, "rita")
    copied = _copy(client)
    assert _opens(app, copied)
    out = client.post("/signout", data={"csrf": csrf_of(client, "/me")})
    assert out.status_code == 303 and out.headers["location"] == "/signin"
    assert not _opens(app, copied)
    assert client.get("/me").status_code == 303


def test_signing_in_again_rotates_the_session_key(app, forge) -> None:
    client = _signed_in(app, forge, "rita")
    before = _copy(client)
    sign_in(client, forge, "rita")
    assert _copy(client) != before
    assert _opens(app, _copy(client)) and not _opens(app, before)


def test_signing_out_everywhere_ends_every_session_of_the_person(app, forge) -> None:
    here, there = _signed_in(app, forge, "rita"), _signed_in(app, forge, "rita")
    other = _signed_in(app, forge, "nick")
    assert "Sign out everywhere" in here.get("/me").text
    assert here.post("/me/signout-everywhere").status_code == 403, "CSRF"
    assert there.get("/me").status_code == 200
    ended = here.post("/me/signout-everywhere", data={"csrf": csrf_of(here, "/me")})
    assert ended.status_code == 303 and ended.headers["location"] == "/signin"
    assert "signed out everywhere" in here.get("/signin").text
    assert here.get("/me").status_code == 303 and there.get("/me").status_code == 303
    assert other.get("/me").status_code == 200, "nobody else's"


def test_an_admins_revoke_ends_the_persons_sessions(app, forge) -> None:
    with session_scope() as session:
        accounts.add_user(session, "ada")
        identity_id = accounts.link_identity(session, "ada", "github", str(ADA_ID), "ada").id
    ada = _signed_in(app, forge, "ada")
    assert ada.get("/me").status_code == 200
    root = _signed_in(app, forge, "root")
    revoked = root.post(
        f"/admin/links/{identity_id}/revoke", data={"csrf": csrf_of(root, "/admin")}
    )
    assert revoked.status_code == 303
    assert ada.get("/me").status_code == 303
    assert root.get("/admin").status_code == 200


def test_a_refused_token_ends_every_session_of_the_person(app, forge) -> None:

    new_job(repo=SECRET_REPO, task="fix the bug")
    here, there = _signed_in(app, forge, "rita"), _signed_in(app, forge, "rita")
    forge.tokens.clear()  # rita revoked Resolver's access on GitHub
    # A page that asks the forge finds the token refused...
    page = here.get("/jobs")
    assert page.status_code == 303 and page.headers["location"].startswith("/signin")
    # ...and the other browser's session, on a page that asks nothing, is gone with it.
    assert there.get("/me").status_code == 303


def test_a_token_refused_through_the_api_ends_the_sessions_too(app, forge) -> None:
    new_job(repo=SECRET_REPO, task="fix the bug")
    here, there = _signed_in(app, forge, "rita"), _signed_in(app, forge, "rita")
    forge.tokens.clear()
    assert here.get("/api/jobs").status_code == 401
    assert there.get("/me").status_code == 303


def test_an_admin_whose_token_is_refused_loses_admin(forge, monkeypatch) -> None:
    app = _app_with(monkeypatch, RESOLVER_ACCESS_CACHE_SECONDS="0")
    root = _signed_in(app, forge, "root")
    assert root.get("/admin").status_code == 200
    forge.tokens.clear()
    page = root.get("/admin")
    assert page.status_code == 303 and page.headers["location"].startswith("/signin")
    assert "expired" in root.get(page.headers["location"]).text


def test_pressing_buttons_does_not_extend_the_lifetime(forge, monkeypatch) -> None:
    app = _app_with(monkeypatch, RESOLVER_SESSION_HOURS=str(3.5 / 3600))
    client = _signed_in(app, forge, "root")
    signed_at = time.monotonic()
    while time.monotonic() - signed_at < 2.2:
        # Each press leaves a flash message, and with it a freshly signed cookie.
        pressed = client.post("/me/unlink/999", data={"csrf": csrf_of(client, "/me")})
        assert pressed.status_code == 303 and pressed.headers["location"] == "/me"
        time.sleep(0.4)
    time.sleep(max(0.0, 4.0 - (time.monotonic() - signed_at)))
    assert client.get("/me").status_code == 303


def test_an_idle_session_ends(forge, monkeypatch) -> None:
    app = _app_with(monkeypatch, RESOLVER_SESSION_IDLE_MINUTES=str(1.2 / 60))
    client = _signed_in(app, forge, "rita")
    assert client.get("/me").status_code == 200
    time.sleep(1.5)
    page = client.get("/me")
    assert page.status_code == 303 and page.headers["location"].startswith("/signin")
    assert "has ended" in client.get(page.headers["location"]).text


def test_the_operator_link_opens_one_session(app) -> None:
    path = urlsplit(operator.operator_url(get_settings())).path
    first = browser(app)
    assert first.get(path).status_code == 303
    second = browser(app)
    again = second.get(path)
    assert again.status_code == 410 and "used already" in again.text
    assert second.get("/admin").status_code == 303
    assert first.get("/admin").status_code == 200


def test_the_operator_session_has_no_token_to_check(forge, monkeypatch) -> None:
    app = _app_with(monkeypatch, RESOLVER_ACCESS_CACHE_SECONDS="0")
    client = browser(app)
    assert client.get(urlsplit(operator.operator_url(get_settings())).path).status_code == 303
    assert client.get("/admin").status_code == 200
    assert client.get("/admin").status_code == 200


def test_a_live_page_stops_streaming_when_its_session_ends(app, forge, monkeypatch) -> None:
    from resolver.core.redact import Redactor
    from resolver.store import jobs
    from resolver.web import live
    from tests.web.test_job_page import _trajectory

    monkeypatch.setattr(live, "STREAM_SECONDS", 4.0)  # a stream that outlived it ends anyway
    job_id = new_job(repo=SECRET_REPO)
    _trajectory(job_id, finished=False)
    client = _signed_in(app, forge, "rita")
    with client.stream("GET", f"/jobs/{job_id}/events") as stream:
        chunks = stream.iter_text()
        seen = ""
        while "event: head" not in seen:
            seen += next(chunks)
        assert client.post("/signout", data={"csrf": csrf_of(client, "/me")}).status_code == 303
        with session_scope() as session:
            said = {"step": 3, "content": "after sign-out"}
            later = jobs.append_event(session, job_id, "message", said, Redactor([])).seq
        rest = "".join(chunks)
    assert f"id: {later}\n" not in rest, "nothing more reaches a signed-out browser"


def test_a_forge_that_fails_the_code_exchange_is_a_sign_in_to_try_again(app, forge) -> None:
    """GitHub stops answering between sending the person back and the token exchange."""
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    forge.sign_in_as("nick")
    start = client.get("/signin/github")
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    back = urlsplit(approved.headers["location"])
    forge.close()
    done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 400
    assert "did not complete the sign-in; please try again" in done.text


def test_a_code_exchange_that_drips_is_a_sign_in_to_try_again_at_its_deadline(
    app, forge, monkeypatch
) -> None:
    """GitHub's token endpoint answers a byte at a time: each read comes within httpx2's
    timeout, and the exchange held the request until the forge was done."""
    from resolver.web import proofs

    class Dripping(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b'{"access_token": "gho_' + b"x" * 40 + b'", "token_type": "bearer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for byte in range(len(body)):
                    self.wfile.write(body[byte : byte + 1])
                    self.wfile.flush()
                    time.sleep(0.2)
            except (BrokenPipeError, ConnectionResetError):
                return

        def log_message(self, *_args: object) -> None:
            return None

    monkeypatch.setattr(proofs, "EXCHANGE_SECONDS", 1.0)
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    forge.sign_in_as("nick")
    start = client.get("/signin/github")
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    back = urlsplit(approved.headers["location"])
    with served_handler(Dripping) as slow:
        monkeypatch.setenv("RESOLVER_GITHUB_WEB_URL", slow)  # its token endpoint, from now on
        reset_caches()
        started = time.monotonic()
        done = client.get(f"{back.path}?{back.query}")
        took = time.monotonic() - started
    assert done.status_code == 400
    assert "did not complete the sign-in; please try again" in done.text
    assert took < 5, took  # the body takes 15 s to drip


def test_a_code_exchange_with_a_huge_answer_is_a_sign_in_to_try_again(
    app, forge, monkeypatch
) -> None:
    """GitHub's token endpoint answers with 64 MB and no length: the exchange read it all into
    memory (and an endless one until its deadline)."""
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    forge.sign_in_as("nick")
    start = client.get("/signin/github")
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    back = urlsplit(approved.headers["location"])
    sent = [0]
    with served_handler(huge_answer(sent, declared=False)) as huge:
        monkeypatch.setenv("RESOLVER_GITHUB_WEB_URL", huge)  # its token endpoint, from now on
        reset_caches()
        done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 400
    assert "did not complete the sign-in; please try again" in done.text
    # What the client read, about a megabyte, and the socket buffers held.
    assert sent[0] < HUGE // 4, sent[0]


def test_a_forge_with_no_sign_in_is_not_found(app, forge) -> None:
    client = browser(app)
    for path in ("/signin/nosuchforge", "/signin/nosuchforge/done"):
        assert client.get(path).status_code == 404, path


def test_a_csrf_token_that_looks_like_a_key_is_never_minted(app, forge, monkeypatch) -> None:
    """A page masks whatever is shaped like an API key: a token so shaped would be printed
    masked in every form, and each button would be refused."""
    import types

    from resolver.core import logs

    minted = iter(["AAAAAAAAAAAAsk-BBBBBBBBBBBBBBBBBBBBBBBBBBBB", "C" * 43])
    monkeypatch.setattr(
        logs, "secrets", types.SimpleNamespace(token_urlsafe=lambda _n: next(minted))
    )
    client = browser(app)
    sign_in(client, forge, "root")
    assert csrf_of(client, "/jobs") == "C" * 43
