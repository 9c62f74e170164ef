"""Slack, Jira and Linear senders link themselves: a private Slack link (an ephemeral message)
needs no more than a forge sign-in; a public Jira or Linear link needs a proof of the account
through that provider's own sign-in, kept in the session for that link alone. A mismatch is
refused, saying which account was expected and which was proven."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from integrations.github.standin.api import GitHubAPI
from integrations.jira.standin.atlassian_oauth import AtlassianOAuth
from integrations.linear.standin.api import Actor, LinearAPI
from integrations.slack.standin.api import SlackAPI
from resolver.callbacks.send import send
from resolver.core.settings import get_settings
from resolver.ingress.links import link_url
from resolver.store import accounts
from resolver.store.db import session_scope
from resolver.store.models import Callback, Identity, Job, Notice, User
from resolver.store.vault import Vault, store_credential
from tests.conftest import reset_caches
from tests.integrations.deliveries import SECRETS, SENDERS, jira, linear, load, post, slack
from tests.support.serving import served_answer
from tests.web.conftest import browser, csrf_of, sign_in

ADA_ID = 583231
TEAM, SLACK_USER = SENDERS["slack"].split(":")
CHANNEL, BOT = "C0LAN2Q65", "U0LAN0Z89"
BOT_TOKEN = "xoxb-proofs-" + "b0t" * 8
JIRA_ACCOUNT, LINEAR_USER = SENDERS["jira"], SENDERS["linear"]


@pytest.fixture
def slack_api() -> Iterator[SlackAPI]:
    with SlackAPI() as api:
        api.add_bot(BOT_TOKEN, user_id=BOT)
        api.add_channel(CHANNEL)
        api.add_oauth_app("1111.2222", "slack-oidc-secret")
        yield api


@pytest.fixture
def atlassian() -> Iterator[AtlassianOAuth]:
    with AtlassianOAuth() as server:
        server.add_oauth_app("atlassian-client", "atlassian-secret")
        yield server


@pytest.fixture
def linear_api() -> Iterator[LinearAPI]:
    with LinearAPI() as api:
        api.add_oauth_app("linear-client", "linear-secret")
        yield api


@pytest.fixture
def app(
    forge: GitHubAPI,
    slack_api: SlackAPI,
    atlassian: AtlassianOAuth,
    linear_api: LinearAPI,
    resolver_env: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    """The web app with the Slack, Jira and Linear webhooks on, and each proof configured."""
    settings = {
        "RESOLVER_SLACK_SIGNING_SECRET": SECRETS["slack"],
        "RESOLVER_JIRA_WEBHOOK_SECRET": SECRETS["jira"],
        "RESOLVER_LINEAR_WEBHOOK_SECRET": SECRETS["linear"],
        "RESOLVER_SLACK_API_URL": slack_api.base_url,
        "RESOLVER_SLACK_WEB_URL": slack_api.origin,
        "RESOLVER_SLACK_CLIENT_ID": "1111.2222",
        "RESOLVER_SLACK_CLIENT_SECRET": "slack-oidc-secret",
        "RESOLVER_ATLASSIAN_AUTH_URL": atlassian.url,
        "RESOLVER_ATLASSIAN_API_URL": atlassian.url,
        "RESOLVER_ATLASSIAN_CLIENT_ID": "atlassian-client",
        "RESOLVER_ATLASSIAN_CLIENT_SECRET": "atlassian-secret",
        "RESOLVER_LINEAR_API_URL": linear_api.url,
        "RESOLVER_LINEAR_WEB_URL": linear_api.origin,
        "RESOLVER_LINEAR_CLIENT_ID": "linear-client",
        "RESOLVER_LINEAR_CLIENT_SECRET": "linear-secret",
    }
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
        resolver_env.vars[key] = value
    reset_caches()
    from resolver.app import create_app

    return create_app()


def _rows(model: Any, *where: Any) -> list[Any]:
    with session_scope() as session:
        found = list(session.scalars(select(model).where(*where)))
        session.expunge_all()
        return found


def _newest_notice() -> Notice:
    [notice] = _rows(Notice)[-1:]
    return notice


def _link_in(text: str) -> str:
    found = re.search(r"http://testserver(/link/[\w.\-]+)", text)
    assert found, text
    return found.group(1)


def _slack_mention(app: Any) -> None:
    payload = load("slack", "app_mention__in_channel")
    payload["event"]["text"] = f"<@{BOT}> please fix the flaky test"
    assert post(browser(app), slack(payload)).json() == {"notice": "unlinked"}


def _jira_mention(app: Any) -> str:
    payload = load("jira", "comment_created__wiki_markup")
    payload["comment"]["body"] = "@resolver please fix the flaky test"
    assert post(browser(app), jira(payload)).json() == {"notice": "unlinked"}
    return _link_in(_newest_notice().body)


def _linear_mention(app: Any) -> str:
    payload = load("linear", "Comment.create__on_issue")
    payload["data"]["body"] = "@resolver please fix the flaky test"
    assert post(browser(app), linear(payload)).json() == {"notice": "unlinked"}
    return _link_in(_newest_notice().body)


def _as_ada(app: Any, forge: GitHubAPI, link: str) -> TestClient:
    client = browser(app)
    forge.sign_in_as("ada", user_id=ADA_ID)
    assert sign_in(client, forge, "ada", link) == link
    return client


def _prove(client: TestClient, link: str) -> Any:
    """Press "Prove you are …", approve on the provider, come back: Resolver's answer."""
    start = client.get(f"{link}/prove")
    assert start.status_code == 302, start.text
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    assert approved.status_code == 302, approved.text
    back = urlsplit(approved.headers["location"])
    assert back.path.startswith("/prove/")
    return client.get(f"{back.path}?{back.query}")


def _linked() -> dict[str, set[tuple[str, str]]]:
    """Each user's linked identities."""
    found: dict[str, set[tuple[str, str]]] = {}
    with session_scope() as session:
        for user in session.scalars(select(User)):
            found[user.name] = {(i.provider, i.external_id) for i in user.identities}
    return found


def _store_bot_token() -> None:
    with session_scope() as session:
        installation = accounts.ensure_installation(session, "slack", TEAM)
        vault = Vault(get_settings().fernet_keys)
        store_credential(
            session,
            vault,
            provider="slack",
            kind="bot",
            secret=BOT_TOKEN,
            installation_id=installation.id,
        )


def test_a_private_slack_link_links_on_a_forge_sign_in_alone(app, forge, slack_api) -> None:
    _store_bot_token()
    _slack_mention(app)
    notice = _newest_notice()
    assert "/link/" not in notice.body and "private message" in notice.body
    [callback] = _rows(Callback, Callback.action == "notice")
    assert send(callback.id, get_settings()) is None
    [whisper] = slack_api.ephemeral(CHANNEL, SLACK_USER)
    assert whisper.thread_ts == "1515449483.000108" and "only you can see" in whisper.text
    [public] = [m for m in slack_api.thread(CHANNEL, "1515449483.000108") if m.user == BOT]
    assert "/link/" not in public.text and "private message" in public.text
    assert "private" not in _newest_notice().context, "the link is kept nowhere once sent"

    link = _link_in(whisper.text.replace("<", " ").replace(">", " ").replace("|", " "))
    client = _as_ada(app, forge, link)
    page = client.get(link)
    assert page.status_code == 200 and "Link my account" in page.text
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303 and linked.headers["location"].startswith("/jobs/")
    assert _linked() == {"ada": {("github", str(ADA_ID)), ("slack", SENDERS["slack"])}}
    [job] = _rows(Job)
    assert (job.source, job.requester) == ("slack", SLACK_USER)
    assert job.task.endswith("please fix the flaky test")


def test_a_jira_link_links_once_the_atlassian_account_is_proven(app, forge, atlassian) -> None:
    link = _jira_mention(app)
    client = _as_ada(app, forge, link)
    page = client.get(link)
    assert page.status_code == 200 and f"Prove you are {JIRA_ACCOUNT} on Jira" in page.text
    assert "Link my account" not in page.text
    early = client.post(link, data={"csrf": csrf_of(client, "/me")})
    assert early.status_code == 403 and _rows(Identity) == []

    atlassian.sign_in_as(JIRA_ACCOUNT, name="Test User")
    proven = _prove(client, link)
    assert (proven.status_code, proven.headers["location"]) == (303, link)
    [asked] = atlassian.authorizations
    assert asked.params["audience"] == "api.atlassian.com"
    assert (asked.params["scope"], asked.params["prompt"]) == ("read:me", "consent")
    assert "Link my account" in client.get(link).text
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303 and linked.headers["location"].startswith("/jobs/")
    assert _linked() == {"ada": {("github", str(ADA_ID)), ("jira", JIRA_ACCOUNT)}}
    [identity] = _rows(Identity, Identity.provider == "jira")
    assert identity.login == "Test User"
    [job] = _rows(Job)
    assert job.source == "jira" and job.task.endswith("please fix the flaky test")
    client.post(link, data={"csrf": csrf_of(client, "/me")})
    assert len(_rows(Job)) == 1, "the request runs once, and the proof is spent"


def test_another_atlassian_account_is_refused_and_nothing_is_linked(app, forge, atlassian) -> None:
    link = _jira_mention(app)
    client = _as_ada(app, forge, link)
    atlassian.sign_in_as("557058:mallory", name="Mallory")
    refused = _prove(client, link)
    assert refused.status_code == 403
    assert f"This link is for the Jira account {JIRA_ACCOUNT}" in refused.text
    assert "you proved you are Mallory (account 557058:mallory) on Jira" in refused.text
    after = client.post(link, data={"csrf": csrf_of(client, "/me")})
    assert after.status_code == 403
    assert _rows(Identity) == [] and _rows(Job) == [] and _rows(User) == []


def test_a_linear_link_links_once_the_linear_account_is_proven(app, forge, linear_api) -> None:
    link = _linear_mention(app)
    client = _as_ada(app, forge, link)
    linear_api.sign_in_as(Actor(LINEAR_USER, "Test User", "test"))
    assert _prove(client, link).status_code == 303
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303 and linked.headers["location"].startswith("/jobs/")
    assert _linked() == {"ada": {("github", str(ADA_ID)), ("linear", LINEAR_USER)}}
    [job] = _rows(Job)
    assert job.source == "linear"


def test_a_proof_is_for_its_own_link_alone(app, forge, atlassian) -> None:
    link = _jira_mention(app)
    other = urlsplit(link_url(get_settings(), "jira", JIRA_ACCOUNT, "someone")).path
    client = _as_ada(app, forge, link)
    atlassian.sign_in_as(JIRA_ACCOUNT, name="Test User")
    assert _prove(client, link).status_code == 303
    page = client.get(other)
    assert page.status_code == 200 and "Prove you are @someone on Jira" in page.text
    refused = client.post(other, data={"csrf": csrf_of(client, "/me")})
    assert refused.status_code == 403 and _rows(Identity) == []


def test_a_forged_link_and_a_strangers_post_are_refused(app, forge, atlassian) -> None:
    link = _jira_mention(app)
    client = _as_ada(app, forge, link)
    forged = link[:-3] + "xyz"
    assert "not a link Resolver made" in client.get(forged).text
    assert client.get(f"{forged}/prove").status_code == 403
    atlassian.sign_in_as(JIRA_ACCOUNT)
    assert _prove(client, link).status_code == 303
    assert client.post(link).status_code == 403, "no CSRF token"
    stranger = browser(app)
    assert stranger.post(link, data={"csrf": "guess"}).status_code == 303, "to sign in"
    assert _rows(Identity) == []


def test_without_a_configured_proof_the_page_says_to_ask_an_admin(app, forge, monkeypatch) -> None:
    monkeypatch.delenv("RESOLVER_LINEAR_CLIENT_SECRET")
    reset_caches()
    from resolver.app import create_app

    app = create_app()
    link = _linear_mention(app)
    client = _as_ada(app, forge, link)
    page = client.get(link)
    assert page.status_code == 200 and "Prove you are" not in page.text
    assert "Ask a Resolver admin" in page.text
    assert f"--provider linear --external-id {LINEAR_USER}" in page.text
    assert client.get(f"{link}/prove").headers["location"] == link


def test_a_public_slack_link_is_proven_with_sign_in_with_slack(app, forge, slack_api) -> None:
    """A Slack link that came publicly (not in an ephemeral message) needs Sign in with Slack;
    Authlib checks the ID token against the keys Slack publishes."""
    link = urlsplit(link_url(get_settings(), "slack", SENDERS["slack"], SLACK_USER)).path
    client = _as_ada(app, forge, link)
    assert f"Prove you are @{SLACK_USER} on Slack" in client.get(link).text
    slack_api.sign_in_as("U0OTHER", team_id=TEAM, name="mallory")
    refused = _prove(client, link)
    assert refused.status_code == 403 and f"account {TEAM}:U0OTHER" in refused.text
    slack_api.sign_in_as(SLACK_USER, team_id=TEAM, name="testuser")
    assert _prove(client, link).status_code == 303
    [*_, asked] = slack_api.oidc.authorizations
    assert asked.params["scope"] == "openid profile" and asked.params["nonce"]
    linked = client.post(link, data={"csrf": csrf_of(client, link)})
    assert linked.status_code == 303
    assert _linked() == {"ada": {("github", str(ADA_ID)), ("slack", SENDERS["slack"])}}


def test_a_refused_or_unstarted_proof_links_nothing(app, forge, atlassian) -> None:
    link = _jira_mention(app)
    client = _as_ada(app, forge, link)
    assert client.get("/prove/jira/done?code=x&state=y").status_code == 400, "none under way"
    assert client.get(f"{link}/prove").status_code == 302
    denied = client.get("/prove/jira/done?error=access_denied&state=y")
    assert denied.status_code == 400 and "did not complete the sign-in" in denied.text
    assert "Link my account" not in client.get(link).text
    assert _rows(Identity) == []


def test_when_slack_refuses_the_private_message_the_thread_gets_a_public_link(
    app, forge, slack_api
) -> None:
    """The sender is not in the channel, say: the thread is not left silent, and the link it
    gets instead is a public one, which asks for Sign in with Slack."""
    _store_bot_token()
    slack_api.fail("chat.postEphemeral", "user_not_in_channel")
    _slack_mention(app)
    [callback] = _rows(Callback, Callback.action == "notice")
    assert send(callback.id, get_settings()) is None
    assert slack_api.ephemeral(CHANNEL, SLACK_USER) == []
    [public] = [m for m in slack_api.thread(CHANNEL, "1515449483.000108") if m.user == BOT]
    assert "could not send you a private message" in public.text
    link = _link_in(public.text.replace("<", " ").replace(">", " ").replace("|", " "))
    notice = _newest_notice()
    assert "private" not in notice.context and "could not send you" in notice.body
    page = _as_ada(app, forge, link).get(link)
    assert page.status_code == 200 and "Prove" in page.text


def test_a_provider_that_fails_the_code_exchange_is_a_proof_to_try_again(
    app, forge, atlassian
) -> None:
    """Atlassian stops answering between sending the person back and the token exchange."""
    link = _jira_mention(app)
    client = _as_ada(app, forge, link)
    atlassian.sign_in_as(JIRA_ACCOUNT, name="Test User")
    start = client.get(f"{link}/prove")
    approved = httpx.get(start.headers["location"], follow_redirects=False, trust_env=False)
    back = urlsplit(approved.headers["location"])
    atlassian.__exit__(None, None, None)
    done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 400
    assert "did not complete the sign-in; please try again" in done.text
    with session_scope() as session:
        assert session.scalars(select(Identity).where(Identity.provider == "jira")).all() == []


def test_an_account_answer_of_the_wrong_shape_is_a_proof_to_try_again(
    app, forge, atlassian, monkeypatch
) -> None:
    """Atlassian's `GET /me` answers a list (a proxy's, another API's): no 500, no identity."""
    from resolver.app import create_app

    with served_answer(b"[]") as api:
        monkeypatch.setenv("RESOLVER_ATLASSIAN_API_URL", api)
        reset_caches()
        app = create_app()
        link = _jira_mention(app)
        client = _as_ada(app, forge, link)
        atlassian.sign_in_as(JIRA_ACCOUNT, name="Test User")
        done = _prove(client, link)
    assert done.status_code == 400
    assert "did not complete the sign-in; please try again" in done.text
    assert "Link my account" not in client.get(link).text
    assert _rows(Identity) == []
