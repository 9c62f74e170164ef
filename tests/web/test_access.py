"""Who sees a job: admins, its requester and readers of its repository; everyone else gets the
404 a job that does not exist gets, and someone signed out is sent to sign in, then back."""

from __future__ import annotations

import pytest

from resolver.store import accounts
from resolver.store.db import session_scope
from tests.store.test_storage import new_job
from tests.web.conftest import PUBLIC_URL, ROOT_ID, SECRET_REPO, browser, csrf_of, sign_in

ADA_ID = 583231


@pytest.fixture
def secret_job(forge) -> int:
    """A job on the private repository, asked for by ada."""
    with session_scope() as session:
        user = accounts.add_user(session, "ada")
        accounts.link_identity(session, "ada", "github", str(ADA_ID), login="ada")
        user_id = user.id
    return new_job(repo=SECRET_REPO, requester="ada", requester_id=user_id, task="fix the bug")


def _signed_in(app, forge, login: str):
    client = browser(app)
    if login == "ada":
        forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, login)
    return client


@pytest.mark.parametrize("login", ["root", "ada", "rita", "wendy"])
def test_admin_requester_and_readers_see_the_job(app, forge, secret_job, login) -> None:
    client = _signed_in(app, forge, login)
    page = client.get(f"/jobs/{secret_job}")
    assert page.status_code == 200
    assert "fix the bug" in page.text
    assert f'href="/jobs/{secret_job}"' in client.get("/jobs").text
    assert client.get(f"/api/jobs/{secret_job}").json()["id"] == secret_job
    assert [job["id"] for job in client.get("/api/jobs").json()] == [secret_job]


def test_someone_who_cannot_read_the_repository_gets_a_404(app, forge, secret_job) -> None:
    client = _signed_in(app, forge, "nick")
    missing = client.get("/jobs/999999")
    page = client.get(f"/jobs/{secret_job}")
    assert page.status_code == missing.status_code == 404
    assert "fix the bug" not in page.text and SECRET_REPO not in page.text
    assert f"/jobs/{secret_job}" not in client.get("/jobs").text
    assert client.get(f"/api/jobs/{secret_job}").status_code == 404
    assert client.get("/api/jobs").json() == []
    assert client.get(f"/jobs/{secret_job}/events").status_code == 404


def test_signed_out_is_sent_to_sign_in_and_then_back(app, forge, secret_job) -> None:
    client = browser(app)
    page = client.get(f"/jobs/{secret_job}")
    assert page.status_code == 303
    assert page.headers["location"] == f"/signin?next=%2Fjobs%2F{secret_job}"
    assert client.get("/api/jobs").status_code == 401
    assert client.get(f"/api/jobs/{secret_job}").status_code == 401
    assert client.get("/admin").status_code == 303
    assert sign_in(client, forge, "rita", f"/jobs/{secret_job}") == f"/jobs/{secret_job}"


def test_the_next_page_stays_on_this_site(app, forge) -> None:
    client = browser(app)
    assert sign_in(client, forge, "rita", "//evil.example/steal") == "/jobs"
    assert sign_in(client, forge, "rita", "https://evil.example/") == "/jobs"


def test_the_admin_token_still_opens_the_api(app, resolver_env, secret_job) -> None:
    client = browser(app)
    auth = {"Authorization": f"Bearer {resolver_env.vars['RESOLVER_ADMIN_TOKEN']}"}
    assert client.get(f"/api/jobs/{secret_job}", headers=auth).json()["id"] == secret_job
    assert client.get("/api/jobs", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_the_forge_is_asked_once_while_its_answer_is_fresh(app, forge, secret_job) -> None:
    client = _signed_in(app, forge, "rita")
    for _ in range(3):
        assert client.get(f"/jobs/{secret_job}").status_code == 200
    asked = [r for r in forge.requests if r.path == f"/repos/{SECRET_REPO}"]
    assert len(asked) == 1


def test_a_revoked_token_signs_the_viewer_out(app, forge, secret_job) -> None:
    client = _signed_in(app, forge, "rita")
    forge.tokens.clear()  # the person revoked Resolver's access on GitHub
    page = client.get(f"/jobs/{secret_job}")
    assert page.status_code == 303 and page.headers["location"].startswith("/signin")
    assert "expired" in client.get(page.headers["location"]).text


def test_only_admins_see_the_admin_page(app, forge, secret_job) -> None:
    with session_scope() as session:
        from resolver.core.settings import get_settings
        from resolver.store.vault import Vault, store_credential

        store_credential(
            session,
            Vault(get_settings().fernet_keys),
            provider="github",
            kind="pat",
            secret="ghp_stored_value_never_shown_0000000000",
            user_id=1,
        )
    assert _signed_in(app, forge, "rita").get("/admin").status_code == 404
    page = _signed_in(app, forge, "root").get("/admin")
    assert page.status_code == 200
    assert "ada" in page.text and "github:ada" in page.text
    assert "pat" in page.text and "stored_value" not in page.text


def test_the_session_cookie_is_httponly_and_samesite(app, forge) -> None:
    started = browser(app).get("/signin/github")
    cookie = started.headers["set-cookie"].lower()
    assert cookie.startswith("resolver_session=") and "httponly" in cookie
    assert "samesite=lax" in cookie and "secure" not in cookie  # the test's URL is http


def _self_linked(app, forge, login: str, user_id: int):
    """`login` signs in and links their own account through the link a notice carries."""
    from resolver.core.settings import get_settings
    from resolver.ingress.links import link_url

    link = link_url(get_settings(), "github", str(user_id), login).removeprefix(PUBLIC_URL)
    client = browser(app)
    forge.sign_in_as(login, user_id=user_id)
    sign_in(client, forge, login, link)
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303, linked.text
    return client


def test_a_stranger_named_like_an_admin_is_no_admin(app, forge) -> None:
    """Boss is an admin; the GitHub user `boss`, someone else, links and gets a user of their
    own, named apart from Boss, and no admin page."""
    with session_scope() as session:
        accounts.add_user(session, "Boss", admin=True)
        accounts.link_identity(session, "Boss", "github", "7100", login="Boss")
    stranger = _self_linked(app, forge, "boss", 7200)
    with session_scope() as session:
        identity = accounts.find_identity(session, "github", external_id="7200")
        assert identity is not None and identity.user.name == "boss-2"
        assert not identity.user.is_admin
    assert stranger.get("/admin").status_code == 404
    assert stranger.get("/setup").status_code == 404
    boss = browser(app)
    forge.sign_in_as("Boss", user_id=7100)
    sign_in(boss, forge, "Boss")
    assert boss.get("/admin").status_code == 200 and boss.get("/setup").status_code == 200


def test_an_admin_by_id_keeps_it_through_a_rename_and_the_old_login_does_not(app, forge) -> None:
    """RESOLVER_ADMINS names root's numeric id: root renamed on GitHub is still an admin, and
    whoever takes the login `root` afterwards is not."""
    forge.user_ids.pop("root")
    renamed = browser(app)
    forge.sign_in_as("root-renamed", user_id=ROOT_ID)
    sign_in(renamed, forge, "root-renamed")
    assert renamed.get("/admin").status_code == 200
    taker = browser(app)
    forge.sign_in_as("root", user_id=ROOT_ID + 1)
    sign_in(taker, forge, "root")
    assert taker.get("/admin").status_code == 404
    assert taker.get("/setup").status_code == 404
