"""People link their own accounts: an unlinked GitHub sender's notice carries a signed link;
the same person, signed in with that GitHub account, links it, and their request then runs,
once. Anyone else is refused, and saying which account was expected."""

from __future__ import annotations

import re
import time

import pytest
from sqlalchemy import select

from resolver.store.db import session_scope
from resolver.store.models import Callback, Identity, Job, Notice, User
from tests.conftest import reset_caches
from tests.integrations.deliveries import SECRETS, github, load, post
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in

ADA_ID = 583231


@pytest.fixture
def hooked(forge, monkeypatch: pytest.MonkeyPatch):
    """The web app with GitHub's webhook on."""
    monkeypatch.setenv("RESOLVER_GITHUB_WEBHOOK_SECRET", SECRETS["github"])
    reset_caches()
    from resolver.app import create_app

    return create_app()


def _mention(app, text: str = "@resolver please fix the flaky test") -> str:
    """ada, whom Resolver does not know, mentions the bot; the link in its notice."""
    payload = load("github", "issue_comment.created__on_issue")
    user = {**payload["comment"]["user"], "login": "ada", "id": ADA_ID, "type": "User"}
    payload["comment"].update(body=text, user=user)
    payload["sender"] = user
    payload["repository"].update(full_name=SECRET_REPO, name="secret")
    answer = post(browser(app), github("issue_comment.created", payload))
    assert answer.json() == {"notice": "unlinked"}, answer.text
    with session_scope() as session:
        body = session.scalars(select(Notice.body).order_by(Notice.id.desc())).first()
    assert body is not None
    found = re.search(r"http://testserver(/link/[\w.\-]+)", body)
    assert found, body
    return found.group(1)


def _rows(model, *where):
    with session_scope() as session:
        found = list(session.scalars(select(model).where(*where)))
        session.expunge_all()
        return found


def test_the_sender_links_and_their_request_runs_once(hooked, forge) -> None:
    link = _mention(hooked)
    client = browser(hooked)
    forge.sign_in_as("ada", user_id=ADA_ID)
    assert sign_in(client, forge, "ada", link) == link
    page = client.get(link)
    assert page.status_code == 200 and "Link my account" in page.text
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303 and linked.headers["location"].startswith("/jobs/")
    [user] = _rows(User)
    [identity] = _rows(Identity)
    assert (user.name, identity.provider, identity.external_id) == ("ada", "github", str(ADA_ID))
    [job] = _rows(Job)
    assert job.requester_id == user.id and job.task.endswith("please fix the flaky test")
    assert linked.headers["location"] == f"/jobs/{job.id}"
    actions = {c.action for c in _rows(Callback, Callback.job_id == job.id)}
    assert actions == {"react", "status"}
    assert "is running as job" in client.get(linked.headers["location"]).text
    again = client.post(link, data={"csrf": csrf_of(client, "/me")})
    assert again.status_code == 410 and "used already" in again.text
    assert len(_rows(Job)) == 1, "the request runs once"
    assert len(_rows(User)) == 1


def test_a_waiting_request_that_does_not_read_is_not_run_and_the_account_is_linked(
    hooked, forge
) -> None:
    link = _mention(hooked)
    with session_scope() as session:
        notice = session.scalars(select(Notice).order_by(Notice.id.desc())).one()
        notice.context = {**notice.context, "request": {"task": "fix it", "repo": ["o", "r"]}}
    client = browser(hooked)
    forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, "ada", link)
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303 and linked.headers["location"] == "/me"
    assert [i.external_id for i in _rows(Identity)] == [str(ADA_ID)]
    assert _rows(Job) == []


def test_someone_else_is_refused_with_the_expected_account(hooked, forge) -> None:
    link = _mention(hooked)
    client = browser(hooked)
    sign_in(client, forge, "nick", link)
    page = client.get(link)
    assert page.status_code == 403
    assert "for the GitHub account @ada" in page.text and "signed in as @nick" in page.text
    refused = client.post(link, data={"csrf": csrf_of(client, "/jobs")})
    assert refused.status_code == 403
    assert _rows(Identity) == [] and _rows(Job) == []


def test_a_forged_or_expired_link_links_nothing(hooked, forge, monkeypatch) -> None:
    link = _mention(hooked)
    client = browser(hooked)
    forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, "ada")
    forged = client.get(link[:-3] + "xyz")
    assert forged.status_code == 403 and "not a link Resolver made" in forged.text
    monkeypatch.setenv("RESOLVER_LINK_HOURS", "0.0001")
    reset_caches()
    from resolver.app import create_app

    later = browser(create_app())
    sign_in(later, forge, "ada")
    time.sleep(1.5)
    expired = later.get(link)
    assert expired.status_code == 403 and "expired" in expired.text
    assert _rows(Identity) == []


def test_an_old_request_is_not_run_after_linking(hooked, forge, monkeypatch) -> None:
    link = _mention(hooked)
    monkeypatch.setenv("RESOLVER_LINKED_REQUEST_SECONDS", "0")
    reset_caches()
    from resolver.app import create_app

    client = browser(create_app())
    forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, "ada")
    time.sleep(0.1)
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.headers["location"] == "/me"
    assert len(_rows(Identity)) == 1 and _rows(Job) == []


def test_me_lists_and_unlinks_ones_own_identities(hooked, forge) -> None:
    link = _mention(hooked)
    client = browser(hooked)
    forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, "ada")
    client.post(link, data={"csrf": csrf_of(client, link)})
    me = client.get("/me").text
    assert "GitHub @ada" in me
    [identity] = _rows(Identity)
    assert client.post(f"/me/unlink/{identity.id}").status_code == 403, "CSRF"
    other = browser(hooked)
    sign_in(other, forge, "nick")
    other.post(f"/me/unlink/{identity.id}", data={"csrf": csrf_of(other, "/me")})
    assert len(_rows(Identity)) == 1, "nobody unlinks another's identity"
    client.post(f"/me/unlink/{identity.id}", data={"csrf": csrf_of(client, "/me")})
    assert _rows(Identity) == []


def test_linking_rotates_the_session_key(hooked, forge) -> None:
    link = _mention(hooked)
    client = browser(hooked)
    forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(client, forge, "ada", link)
    before = client.cookies.get("resolver_session")
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303 and client.get("/me").status_code == 200
    copied = browser(hooked).get("/me", headers={"cookie": f"resolver_session={before}"})
    assert copied.status_code == 303, "the key from before linking opens nothing"


def test_a_used_link_is_refused_in_another_browser_too(hooked, forge) -> None:
    link = _mention(hooked)
    first, second = browser(hooked), browser(hooked)
    forge.sign_in_as("ada", user_id=ADA_ID)
    sign_in(first, forge, "ada", link)
    sign_in(second, forge, "ada", link)
    assert second.get(link).status_code == 200, "viewing the page uses nothing"
    assert first.post(link, data={"csrf": csrf_of(first, link)}).status_code == 303
    page = second.get(link)
    assert page.status_code == 410 and "used already" in page.text
    again = second.post(link, data={"csrf": csrf_of(second, "/me")})
    assert again.status_code == 410
    assert len(_rows(Job)) == 1 and len(_rows(Identity)) == 1
