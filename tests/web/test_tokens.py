"""The life of a person's forge token: linking stores the GitHub App user token they signed in
with; it is renewed just before it expires (GitHub rotates the refresh token, and the old one is
then refused); two renewals at once keep one working token; a token the person revoked is
noticed and they are told to sign in again, which stores a fresh one. No token is ever written
to a log line, a page or a status message."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import select

from integrations.github import signin as github_signin
from integrations.github.auth import GitHubAuthError, client_for_job, user_token
from integrations.github.standin.api import GitHubAPI
from resolver.callbacks.status import JobView, render
from resolver.contract.signin import IssuedToken, issued_token
from resolver.contract.triggers import read_trigger
from resolver.core.job import JobContext
from resolver.core.settings import get_settings
from resolver.core.states import JobState
from resolver.store import accounts, jobs
from resolver.store.db import session_scope
from resolver.store.models import Credential, Identity, User
from resolver.store.secrets import save_oauth_token, stored_token
from resolver.store.vault import Vault
from resolver.worker.request import load, run_request
from tests.conftest import reset_caches
from tests.integrations.deliveries import SECRETS
from tests.web.conftest import CLIENT_ID, CLIENT_SECRET, SECRET_REPO, browser, csrf_of, sign_in
from tests.web.test_linking import ADA_ID, _mention, _rows

SIGN_IN_AGAIN = "sign in again at http://testserver/signin?next=/me"


@dataclass
class Clock:
    """One time for Resolver and the GitHub stand-in; a test moves it on."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def time(self) -> float:
        return self.now.timestamp()


@pytest.fixture
def clock(forge: GitHubAPI) -> Clock:
    """GitHub App user tokens that expire (eight hours), aged by the test's clock."""
    found = Clock(datetime.now(UTC))
    forge.oauth.clock = found.time
    forge.oauth.expiring = True
    return found


@pytest.fixture
def hooked(forge, clock, monkeypatch: pytest.MonkeyPatch):
    """The web app with GitHub's webhook on."""
    monkeypatch.setenv("RESOLVER_GITHUB_WEBHOOK_SECRET", SECRETS["github"])
    reset_caches()
    from resolver.app import create_app

    return create_app()


def _linked_ada(app, forge: GitHubAPI):
    """ada mentions the bot, signs in with GitHub and links her account from the notice."""
    link = _mention(app)
    client = browser(app)
    forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, "ada", link)
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303, linked.text
    [user] = _rows(User)
    return client, user


def _opened(credential: Credential) -> tuple[str, str]:
    vault = Vault(get_settings().fernet_keys)
    assert credential.refresh_ciphertext is not None
    return (
        vault.decrypt(credential.ciphertext).reveal(),
        vault.decrypt(credential.refresh_ciphertext).reveal(),
    )


def _never_shown(secrets: list[str], caplog: pytest.LogCaptureFixture, *texts: str) -> None:
    logged = caplog.text + "".join(str(vars(record)) for record in caplog.records)
    for secret in secrets:
        assert secret not in logged
        for text in texts:
            assert secret not in text


def test_linking_stores_the_token_and_it_is_renewed_just_before_it_expires(
    hooked, forge: GitHubAPI, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client, user = _linked_ada(hooked, forge)
    [credential] = _rows(Credential)
    assert (credential.provider, credential.kind, credential.user_id) == (
        "github",
        "oauth",
        user.id,
    )
    first, first_refresh = _opened(credential)
    assert forge.tokens[first] == "ada" and first not in credential.ciphertext
    assert credential.expires_at is not None
    lasts = credential.expires_at - clock.now  # from when the link was made: a little later
    assert timedelta(hours=8) <= lasts < timedelta(hours=8, minutes=1)

    clock.now += timedelta(hours=1)
    assert user_token(user.id, get_settings(), clock=clock) == first and forge.oauth.refreshes == []

    clock.now += timedelta(hours=6, minutes=56)  # four minutes before it expires
    renewed = user_token(user.id, get_settings(), clock=clock)
    assert renewed != first and forge.oauth.refreshes == ["renewed"]
    assert first not in forge.tokens, "GitHub retires the old token"
    [credential] = _rows(Credential)
    again, rotated = _opened(credential)
    assert again == renewed and rotated != first_refresh
    spent = httpx.post(
        f"{forge.web_url}/login/oauth/access_token",
        data={
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "grant_type": "refresh_token",
            "refresh_token": first_refresh,
        },
        headers={"Accept": "application/json"},
        trust_env=False,
    )
    assert spent.status_code == 200 and spent.json()["error"] == "bad_refresh_token"
    assert client_for_job(read_trigger({}), user.id, get_settings()).authenticated_login() == "ada"
    assert credential.revoked_at is None
    me = client.get("/me").text
    assert "sign in again" not in me
    _never_shown([first, first_refresh, renewed, rotated], caplog, me)


def _issued(forge: GitHubAPI, login: str) -> IssuedToken:
    """GitHub's web flow for `login`, as an app walks it, without Resolver."""
    forge.sign_in_as(login)
    approved = httpx.get(
        f"{forge.web_url}/login/oauth/authorize",
        params={"client_id": CLIENT_ID, "redirect_uri": "http://testserver/cb", "state": "s"},
        follow_redirects=False,
        trust_env=False,
    )
    code = parse_qs(urlsplit(approved.headers["location"]).query)["code"][0]
    answer = httpx.post(
        f"{forge.web_url}/login/oauth/access_token",
        data={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "code": code},
        headers={"Accept": "application/json"},
        trust_env=False,
    )
    return issued_token(answer.json())


def test_two_renewals_at_once_keep_one_working_token(
    backend: str, forge: GitHubAPI, clock: Clock
) -> None:
    settings = get_settings()
    with session_scope() as session:
        user_id = accounts.add_user(session, "ada").id
        save_oauth_token(
            session, Vault(settings.fernet_keys), "github", user_id, _issued(forge, "ada"), clock()
        )
    clock.now += timedelta(hours=8, minutes=1)  # past its expiry: both must renew first

    def slow_renewal(refresh_token: str) -> IssuedToken:
        time.sleep(0.3)  # the other caller arrives while this one holds the refresh token
        return github_signin.refresh(settings, refresh_token)

    start = threading.Barrier(2)
    got: list[str | None] = []

    def use() -> None:
        start.wait()
        got.append(
            stored_token(
                "github",
                user_id=user_id,
                refresh=slow_renewal,
                clock=clock,
                settings=get_settings(),
            )
        )

    threads = [threading.Thread(target=use) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert forge.oauth.refreshes == ["renewed"], "the second caller read the rotated token"
    assert len(got) == 2 and got[0] == got[1] and forge.tokens[str(got[0])] == "ada"
    [credential] = _rows(Credential)
    assert credential.revoked_at is None


def test_a_revoked_token_is_noticed_and_signing_in_again_renews_it(
    hooked, forge: GitHubAPI, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client, user = _linked_ada(hooked, forge)
    [credential] = _rows(Credential)
    secrets = list(_opened(credential))
    forge.revoke_authorization("ada")

    with session_scope() as session:
        job_id = jobs.create_job(
            session,
            jobs.NewJob(
                source="github",
                task="fix it",
                repo=SECRET_REPO,
                requester_id=user.id,
                trigger={"repo": SECRET_REPO},
            ),
        ).id
    with session_scope() as session:
        result = run_request(session, JobContext(job_id, get_settings()), load(session, job_id))
    assert result.state == JobState.FAILED and result.error is not None
    assert SIGN_IN_AGAIN in result.error, result.error
    now = datetime.now(UTC)
    status = render(
        JobView(
            id=job_id,
            state=result.state,
            outcome=result.outcome,
            repo=SECRET_REPO,
            steps=0,
            cost_usd=None,
            started_at=now,
            finished_at=now,
            now=now,
            job_url=f"http://testserver/jobs/{job_id}",
            error=result.error,
        )
    )
    assert "GitHub authorization was revoked" in status and SIGN_IN_AGAIN in status
    [credential] = _rows(Credential)
    assert credential.revoked_at is not None
    with pytest.raises(GitHubAuthError, match="sign in again"):
        user_token(user.id, get_settings(), clock=clock)
    me = client.get("/me")
    assert 'href="/signin?next=/me">sign in again' in me.text

    assert sign_in(client, forge, "ada", "/me") == "/me"
    [credential] = _rows(Credential)
    fresh, fresh_refresh = _opened(credential)
    assert credential.revoked_at is None and fresh not in secrets
    assert (
        user_token(user.id, get_settings(), clock=clock) == fresh and forge.tokens[fresh] == "ada"
    )
    me = client.get("/me")
    assert "sign in again" not in me.text
    _never_shown([*secrets, fresh, fresh_refresh], caplog, me.text, status, result.error)


def test_the_admin_sees_every_link_and_revokes_one(hooked, forge: GitHubAPI) -> None:
    _, ada = _linked_ada(hooked, forge)
    with session_scope() as session:
        accounts.add_user(session, "olga")
        old = accounts.link_identity(session, "olga", "github", "77", "olga")
        old.created_at = datetime.now(UTC) - timedelta(days=200)
    admin = browser(hooked)
    sign_in(admin, forge, "root")
    page = admin.get("/admin")
    assert page.status_code == 200
    rows = {row.split("</tr>")[0] for row in page.text.split("<tr") if "/revoke" in row}
    [ada_row] = [row for row in rows if "@ada" in row]
    [olga_row] = [row for row in rows if "@olga" in row]
    assert "present" in ada_row and "stale" not in ada_row
    assert "none" in olga_row and "stale" in olga_row
    with session_scope() as session:
        identity_id = session.scalars(
            select(Identity.id).where(Identity.external_id == str(ADA_ID))
        ).one()
    action = f"/admin/links/{identity_id}/revoke"

    nick = browser(hooked)
    sign_in(nick, forge, "nick")
    assert nick.post(action, data={"csrf": csrf_of(nick, "/jobs")}).status_code == 404
    assert admin.post(action).status_code == 403, "no CSRF token"
    assert admin.post(action, data={"csrf": "forged"}).status_code == 403
    assert len(_rows(Identity)) == 2 and len(_rows(Credential)) == 1

    done = admin.post(action, data={"csrf": csrf_of(admin, "/admin")})
    assert done.status_code == 303 and done.headers["location"] == "/admin"
    assert [i.login for i in _rows(Identity)] == ["olga"]
    assert _rows(Credential) == [], "ada's stored GitHub token went with the link"
    assert "Revoked the link of GitHub ada of ada" in admin.get("/admin").text
    missing = admin.post("/admin/links/999999/revoke", data={"csrf": csrf_of(admin, "/admin")})
    assert missing.status_code == 303 and "Nothing was revoked" in admin.get("/admin").text
    assert [user.name for user in _rows(User)] == [ada.name, "olga"], "users stay"


def test_the_admin_forgets_a_person_once_their_running_job_stopped(hooked, forge) -> None:
    ada_browser, ada = _linked_ada(hooked, forge)
    with session_scope() as session:
        job = jobs.create_job(
            session, jobs.NewJob(source="github", task="a secret plan", requester_id=ada.id)
        )
        job.state = JobState.RUNNING.value
        job_id = job.id
    admin = browser(hooked)
    sign_in(admin, forge, "root")
    assert f"/admin/users/{ada.id}/forget" in admin.get("/admin").text
    action = f"/admin/users/{ada.id}/forget"

    assert ada_browser.post(action, data={"csrf": csrf_of(ada_browser, "/jobs")}).status_code == 404
    assert admin.post(action).status_code == 403, "no CSRF token"
    assert admin.post(action, data={"csrf": "forged"}).status_code == 403

    asked = admin.post(action, data={"csrf": csrf_of(admin, "/admin")})
    assert asked.status_code == 303
    assert f"running job(s) {job_id} to stop" in admin.get("/admin").text
    assert [u.name for u in _rows(User) if u.id == ada.id] == ["ada"], "not yet"
    with session_scope() as session:
        running = jobs.get_job(session, job_id)
        assert running.cancel_requested
        running.state = JobState.CANCELLED.value  # its worker stopped it

    done = admin.post(action, data={"csrf": csrf_of(admin, "/admin")})
    assert done.status_code == 303
    assert "Forgot ada: 1 linked account(s), 1 token(s)" in admin.get("/admin").text
    assert ada.id not in [u.id for u in _rows(User)]
    assert _rows(Credential) == []
    with session_scope() as session:
        assert jobs.get_job(session, job_id).task == "removed"
    assert ada_browser.get("/jobs").status_code in (302, 303, 401), "her sign-in ended"
