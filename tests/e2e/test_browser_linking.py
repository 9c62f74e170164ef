"""People link their own chat and tracker accounts, in a real browser (Debian's Chromium driven
by Playwright, as in test_browser). An unlinked Slack sender's mention brings an ephemeral
message with a link; followed through GitHub sign-in, it links their Slack account and runs the
request, which opens its PR. A Jira notice's link opened by someone whose Atlassian account is
not the one it names is refused."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from integrations.jira.standin.atlassian_oauth import AtlassianOAuth
from integrations.slack.standin.api import TEAM_ID
from resolver.store.db import session_scope
from resolver.store.models import Identity, Notice
from tests.e2e.github_flow import ALICE_ID, github_settings, widgets
from tests.e2e.slack_flow import ALICE, CHANNEL, app_mention, link_alice, slack_settings
from tests.e2e.stack import fix_script, ingress, running_stack
from tests.e2e.test_browser import (
    browser,
    publish_screenshot,
    refused_by_csp,
    screenshot,
    serve,
    sign_in_with_github,
)
from tests.e2e.test_slack import assert_pull_request
from tests.integrations.deliveries import SECRETS, jira, load, post, slack
from tests.integrations.github.conftest import REPO
from tests.support.ports import free_port

__all__ = ["browser"]  # the fixture, shared with test_browser

CLIENT_ID, CLIENT_SECRET = "Iv1.linking-test", "linking-test-secret"
JIRA_ACCOUNT = "5b10ac8d82e05b22cc7d4ef5"


def web_settings(github_api, web: str) -> dict[str, str]:
    github_api.add_oauth_app(CLIENT_ID, CLIENT_SECRET)
    return {
        "RESOLVER_PUBLIC_URL": web,
        "RESOLVER_GITHUB_WEB_URL": github_api.web_url,
        "RESOLVER_GITHUB_CLIENT_ID": CLIENT_ID,
        "RESOLVER_GITHUB_CLIENT_SECRET": CLIENT_SECRET,
    }


def link_in(text: str, web: str) -> str:
    found = re.search(re.escape(web) + r"/link/[\w.\-]+", text)
    assert found, text
    return found.group(0)


@pytest.mark.docker
@pytest.mark.timeout(900)
def test_a_slack_sender_links_through_github_and_their_request_opens_its_pr(
    resolver_env, tmp_path, monkeypatch, github_api, git_server, key_file, slack_api, browser
) -> None:
    port = free_port()
    web = f"http://127.0.0.1:{port}"
    _, bare = widgets(github_api, git_server)
    settings = {
        **github_settings(github_api, key_file),
        **slack_settings(slack_api, github_api),
        **web_settings(github_api, web),
    }
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        link_alice(stack, github_api, on_slack=False)  # alice uses Resolver from GitHub only
        stack.llm.push(*fix_script())
        serve(stack, port)
        stack.start_worker()
        payload, ts = app_mention(slack_api, f"please fix add() repo={REPO}")
        answer = post(ingress(stack, monkeypatch), slack(payload))
        assert answer.json() == {"notice": "unlinked"}, answer.text

        def public() -> list[str]:
            return [m.text for m in slack_api.thread(CHANNEL, ts) if m.user != ALICE]

        # The private link is sent first, then the notice in the thread that says so.
        stack.wait(lambda: bool(public()), 300, "the notice in the thread")
        [whisper] = slack_api.ephemeral(CHANNEL, ALICE)
        assert whisper.thread_ts == ts
        [notice] = public()
        assert "/link/" not in notice and "private message" in notice, notice
        link = link_in(whisper.text, web)

        page = browser.new_page(viewport={"width": 1000, "height": 700})
        refused = refused_by_csp(page)
        sign_in_with_github(page, github_api, "alice", ALICE_ID, link)
        assert "Link the Slack account" in page.content()
        screenshot(page, "link-page.png")
        page.get_by_role("button", name="Link my account").click()
        page.wait_for_url(re.compile(r".*/jobs/\d+$"))
        assert "is running as job" in page.content()
        job_id = int(page.url.rsplit("/", 1)[1])
        assert refused == []

        stack.wait_finished(job_id)
        stack.wait_callbacks_settled(job_id)
        assert_pull_request(stack.job(job_id), github_api, bare)
        with session_scope() as session:
            identity = session.scalar(select(Identity).where(Identity.provider == "slack"))
            assert identity is not None and identity.user.name == "alice"
            assert identity.external_id == f"{TEAM_ID}:{ALICE}"
    publish_screenshot("link-page.png")


@pytest.fixture
def atlassian() -> Iterator[AtlassianOAuth]:
    with AtlassianOAuth() as server:
        server.add_oauth_app("atlassian-client", "atlassian-secret")
        yield server


@pytest.mark.timeout(300)
def test_a_jira_link_opened_with_another_atlassian_account_is_refused(
    resolver_env, tmp_path: Path, monkeypatch, github_api, atlassian, browser
) -> None:
    port = free_port()
    web = f"http://127.0.0.1:{port}"
    settings = {
        **web_settings(github_api, web),
        "RESOLVER_GITHUB_API_URL": github_api.base_url,
        "RESOLVER_JIRA_WEBHOOK_SECRET": SECRETS["jira"],
        "RESOLVER_ATLASSIAN_AUTH_URL": atlassian.url,
        "RESOLVER_ATLASSIAN_API_URL": atlassian.url,
        "RESOLVER_ATLASSIAN_CLIENT_ID": "atlassian-client",
        "RESOLVER_ATLASSIAN_CLIENT_SECRET": "atlassian-secret",
    }
    with running_stack(resolver_env, tmp_path, **settings) as stack:
        serve(stack, port)
        payload = load("jira", "comment_created__wiki_markup")
        payload["comment"]["body"] = "@resolver please fix the flaky test"
        answer = post(ingress(stack, monkeypatch), jira(payload))
        assert answer.json() == {"notice": "unlinked"}, answer.text
        with session_scope() as session:
            body = session.scalars(select(Notice.body)).one()
        link = link_in(body, web)

        page = browser.new_page()
        refused = refused_by_csp(page)
        sign_in_with_github(page, github_api, "mallory", 6006, link)
        atlassian.sign_in_as("557058:mallory", name="Mallory")
        page.get_by_role("link", name=f"Prove you are {JIRA_ACCOUNT} on Jira").click()
        page.wait_for_selector("p.error")
        text = page.inner_text("main")
        assert f"This link is for the Jira account {JIRA_ACCOUNT}" in text
        assert "you proved you are Mallory (account 557058:mallory) on Jira" in text
        assert page.get_by_role("button", name="Link my account").count() == 0
        assert refused == []
        with session_scope() as session:
            assert session.scalars(select(Identity)).all() == []
