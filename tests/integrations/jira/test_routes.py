"""Jira: comments mentioning the bot (text, wiki markup, ADF), the trigger label, signatures."""

from __future__ import annotations

from typing import Any

import pytest

from integrations.jira.events import Issue
from integrations.jira.verify import verify_signature
from resolver.contract.inbound import SignatureError
from resolver.contract.triggers import TrackerTicket, read_trigger
from tests.integrations.deliveries import jira, load, post

ALICE = "5b10ac8d82e05b22cc7d4ef5"
BOT_ACCOUNT = "712020:bot-account-0001"


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("jira", ALICE)
    return store


def wiki(text: str) -> dict[str, Any]:
    payload = load("jira", "comment_created__wiki_markup")
    payload["comment"]["body"] = text
    return payload


def adf(*content: dict[str, Any]) -> dict[str, Any]:
    payload = load("jira", "comment_created__adf")
    payload["comment"]["body"] = {"type": "doc", "version": 1, "content": list(content)}
    return payload


def paragraph(*nodes: dict[str, Any]) -> dict[str, Any]:
    return {"type": "paragraph", "content": list(nodes)}


def text(value: str, *marks: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "text", "text": value}
    if marks:
        node["marks"] = [{"type": mark} for mark in marks]
    return node


def bot_mention(account: str = BOT_ACCOUNT, label: str = "@Resolver") -> dict[str, Any]:
    return {"type": "mention", "attrs": {"id": account, "text": label, "accessLevel": ""}}


def labels(before: str, after: str) -> dict[str, Any]:
    payload = load("jira", "jira_issue_updated__labels_changed")
    item = payload["changelog"]["items"][0]
    item["fromString"], item["toString"] = before, after
    return payload


def test_verify_signature_requires_the_sha256_prefix() -> None:
    import hashlib
    import hmac

    body = b'{"webhookEvent": "comment_created"}'
    digest = hmac.new(b"secret", body, hashlib.sha256).hexdigest()
    verify_signature({"x-hub-signature": f"sha256={digest}"}, body, "secret")
    for header in (digest, f"sha1={digest}", f"SHA256={digest}"):
        with pytest.raises(SignatureError):
            verify_signature({"x-hub-signature": header}, body, "secret")


def test_comment_with_the_handle(client: Any, linked: Any) -> None:
    response = post(client, jira(wiki("@resolver please look at the export timeout")))
    assert response.status_code == 202
    [job] = linked.jobs()
    assert (job.source, job.repo, job.task) == ("jira", None, "please look at the export timeout")
    assert job.conversation_key == "jira:example.atlassian.net:SP-10"
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, TrackerTicket) and trigger.key == "SP-10"
    assert trigger.reach == {"site": "https://example.atlassian.net"}
    assert trigger.part["comment_id"] == "10042" and trigger.part["project_key"] == "SP"
    assert trigger.url == "https://example.atlassian.net/browse/SP-10"


def test_data_center_site_keeps_its_context_path(client: Any, linked: Any) -> None:
    payload = wiki("@resolver please look at the export timeout")
    payload["issue"]["self"] = "https://jira.corp.example/jira/rest/api/2/issue/10002"
    assert post(client, jira(payload)).status_code == 202
    [job] = linked.jobs()
    trigger = read_trigger(job.trigger)
    assert trigger.reach == {"site": "https://jira.corp.example/jira"}
    assert trigger.url == "https://jira.corp.example/jira/browse/SP-10"
    assert job.conversation_key == "jira:jira.corp.example/jira:SP-10"


def test_wiki_markup_account_mention(client: Any, linked: Any, configure: Any) -> None:
    configure(RESOLVER_BOT_ACCOUNT_IDS=BOT_ACCOUNT)
    payload = wiki(f"[~accountid:{BOT_ACCOUNT}] can you fix this?")
    assert post(client, jira(payload)).status_code == 202
    assert linked.jobs()[0].task == "can you fix this?"


def test_wiki_mention_of_someone_else(client: Any, linked: Any, configure: Any) -> None:
    configure(RESOLVER_BOT_ACCOUNT_IDS=BOT_ACCOUNT)
    assert post(client, jira(wiki(f"[~accountid:{ALICE}] can you fix this?"))).status_code == 204


def test_adf_account_mention(client: Any, linked: Any, configure: Any) -> None:
    configure(RESOLVER_BOT_ACCOUNT_IDS=BOT_ACCOUNT)
    payload = adf(paragraph(bot_mention(label="@Code Bot"), text(" add retries to the export")))
    assert post(client, jira(payload)).status_code == 202
    assert linked.jobs()[0].task == "add retries to the export"


def test_adf_mention_by_display_name(client: Any, linked: Any) -> None:
    payload = adf(paragraph(bot_mention(account="unknown"), text(" add retries")))
    assert post(client, jira(payload)).status_code == 202


@pytest.mark.parametrize(
    "content",
    [
        [paragraph(text("@resolver fix", "code"))],
        [{"type": "codeBlock", "content": [text("@resolver fix")]}],
        [{"type": "blockquote", "content": [paragraph(bot_mention(), text(" fix"))]}],
        [paragraph(text("nothing for the bot here"))],
    ],
)
def test_adf_mentions_in_code_or_quotes_do_nothing(
    client: Any, linked: Any, content: list[dict[str, Any]]
) -> None:
    assert post(client, jira(adf(*content))).status_code == 204


@pytest.mark.parametrize(
    "body", ["{code}@resolver fix{code}", "{quote}@resolver fix{quote}", "{{@resolver}} is a bot"]
)
def test_wiki_code_and_quotes_do_nothing(client: Any, linked: Any, body: str) -> None:
    assert post(client, jira(wiki(body))).status_code == 204


def test_trigger_label_newly_added(client: Any, linked: Any) -> None:
    assert post(client, jira(labels("backend", "backend resolver"))).status_code == 202
    [job] = linked.jobs()
    assert job.task.startswith("Export fails for large reports")
    assert read_trigger(job.trigger).label == "resolver"


@pytest.mark.parametrize(("before", "after"), [("resolver", "resolver backend"), ("", "backend")])
def test_labels_without_a_newly_added_trigger(
    client: Any, linked: Any, before: str, after: str
) -> None:
    assert post(client, jira(labels(before, after))).status_code == 204


def test_issue_created_with_the_label(client: Any, linked: Any) -> None:
    payload = load("jira", "jira_issue_created__plain")
    assert post(client, jira(payload)).status_code == 204
    payload["issue"]["fields"]["labels"] = ["resolver"]
    assert post(client, jira(payload)).status_code == 202


def test_comment_edits_are_ignored(client: Any, linked: Any) -> None:
    payload = load("jira", "comment_updated__edit")
    payload["comment"]["body"] = "@resolver fix"
    assert post(client, jira(payload)).status_code == 204


def test_app_accounts_are_ignored_unless_allow_listed(client: Any, store: Any) -> None:
    store.link("jira", "app-1", "automation")
    payload = wiki("@resolver fix")
    payload["comment"]["author"].update(accountId="app-1", accountType="app")
    assert post(client, jira(payload)).status_code == 204


def test_the_bots_own_account_is_ignored(client: Any, store: Any, configure: Any) -> None:
    configure(RESOLVER_BOT_ACCOUNT_IDS=BOT_ACCOUNT)
    store.link("jira", BOT_ACCOUNT)
    payload = wiki("@resolver I'm on it")
    payload["comment"]["author"]["accountId"] = BOT_ACCOUNT
    assert post(client, jira(payload)).status_code == 204


def test_retries_share_the_webhook_identifier(client: Any, linked: Any) -> None:
    first = post(client, jira(wiki("@resolver fix"), identifier="wh-1"))
    again = post(client, jira(wiki("@resolver fix"), identifier="wh-1"))
    assert (first.status_code, again.status_code) == (202, 200)


def test_bad_signature_is_401(client: Any, linked: Any) -> None:
    delivery = jira(wiki("@resolver fix"), secret="wrong")
    assert post(client, delivery).status_code == 401


def test_unlinked_user_gets_a_notice(client: Any, store: Any) -> None:
    assert post(client, jira(wiki("@resolver fix"))).json() == {"notice": "unlinked"}
    trigger = read_trigger(store.notices()[0].context)
    assert isinstance(trigger, TrackerTicket) and trigger.key == "SP-10"


def test_off_without_a_secret(client: Any, store: Any, configure: Any) -> None:
    configure(RESOLVER_JIRA_WEBHOOK_SECRET="")
    assert post(client, jira(wiki("@resolver fix"))).status_code == 404


def test_an_issue_link_that_is_no_url_names_no_site() -> None:
    assert (
        Issue(key="KAN-1", self="https://[example.atlassian.net/rest/api/2/issue/1").site() is None
    )
    issue = Issue(key="KAN-1", self="https://jira.example/ctx/rest/api/2/issue/1")
    assert issue.site() == "https://jira.example/ctx"
