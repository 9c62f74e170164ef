"""Slack: url_verification, app mentions, thread follow-ups, inline options, the 300 s window."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import pytest

from integrations.slack.verify import verify_request
from resolver.contract.inbound import SignatureError
from resolver.contract.triggers import ChatThread, read_trigger
from tests.integrations.deliveries import load, post, slack

ALICE = "T061EG9R6:W021FGA1Z"
BOB = "T061EG9R6:U061F7AUR"
BOT_USER = "U0LAN0Z89"


@pytest.fixture
def linked(store: Any) -> Any:
    store.link("slack", ALICE, "W021FGA1Z")
    store.link("slack", BOB, "U061F7AUR", user="bob")
    return store


def mention(text: str, fixture: str = "app_mention__in_channel") -> dict[str, Any]:
    payload = load("slack", fixture)
    payload["event"]["text"] = text
    return payload


def reply(text: str, event_id: str = "Ev-reply") -> dict[str, Any]:
    payload = load("slack", "message__thread_reply")
    payload["event"]["text"] = text
    payload["event_id"] = event_id
    return payload


def test_known_answer_vector() -> None:
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id="
        b"G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command="
        b"%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2F"
        b"T1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121"
        b".803a0bc887a14d10d2c447fce8b6703c"
    )
    headers = {
        "x-slack-request-timestamp": "1531420618",
        "x-slack-signature": "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
    }
    verify_request(headers, body, "8f742231b10e8888abcd99yyyzzz85a5", now=1531420618)
    with pytest.raises(SignatureError):
        verify_request(headers, body, "8f742231b10e8888abcd99yyyzzz85a5", now=1531420618 + 301)


def test_url_verification_answers_the_challenge(webhook_client: Any, store: Any) -> None:
    payload = load("slack", "url_verification__handshake")
    response = post(webhook_client, slack(payload))
    assert response.status_code == 200
    assert response.json() == {"challenge": payload["challenge"]}


def test_unsigned_url_verification_is_401(webhook_client: Any, store: Any) -> None:
    delivery = slack(load("slack", "url_verification__handshake"))
    delivery.headers.pop("X-Slack-Signature")
    assert post(webhook_client, delivery).status_code == 401


@pytest.mark.parametrize("body", [b'{"type": "event_callback", "x": "\xff\xfe"}', b"\xc3\x28"])
def test_a_correctly_signed_body_that_is_not_utf8_is_400(
    webhook_client: Any, linked: Any, body: bytes
) -> None:
    # The signature is over the raw bytes, so it checks out; the body is what is wrong.
    assert post(webhook_client, slack(body)).status_code == 400
    assert linked.jobs() == []


def test_app_mention_in_a_channel(webhook_client: Any, linked: Any) -> None:
    text = f"<@{BOT_USER}> fix the login bug repo=acme/web branch=fix-login"
    response = post(webhook_client, slack(mention(text)))
    assert response.status_code == 202
    [job] = linked.jobs()
    assert (job.source, job.task, job.repo) == ("slack", "fix the login bug", "acme/web")
    assert job.requester_id is not None
    assert job.conversation_key == "slack:T061EG9R6:C0LAN2Q65:1515449483.000108"
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, ChatThread)
    assert trigger.options == {"repo": "acme/web", "branch": "fix-login"}
    assert trigger.branch == "fix-login" and trigger.part["channel"] == "C0LAN2Q65"
    assert trigger.part["thread_ts"] == "1515449483.000108"
    assert trigger.reach["team_id"] == "T061EG9R6"


def test_documented_mention_text(webhook_client: Any, linked: Any) -> None:
    assert post(webhook_client, slack(load("slack", "app_mention__in_channel"))).status_code == 202
    assert linked.jobs()[0].task == "for an honorable mention."


def test_invalid_options_stay_in_the_request(webhook_client: Any, linked: Any) -> None:
    post(webhook_client, slack(mention(f"<@{BOT_USER}> try repo=not-a-repo branch=../../etc")))
    [job] = linked.jobs()
    trigger = read_trigger(job.trigger)
    assert job.repo is None and isinstance(trigger, ChatThread) and trigger.options == {}
    assert job.task == "try repo=not-a-repo branch=../../etc"


def test_app_mention_in_a_thread_then_a_plain_reply_is_a_followup(
    webhook_client: Any, linked: Any
) -> None:
    first = post(webhook_client, slack(load("slack", "app_mention__in_thread")))
    assert first.status_code == 202
    followup = post(webhook_client, slack(reply("also handle the empty case")))
    assert followup.status_code == 202
    first_job, second_job = linked.jobs()
    assert second_job.conversation_key == first_job.conversation_key
    assert second_job.task == "also handle the empty case"
    origin = read_trigger(second_job.trigger).origin
    assert origin.is_followup is True and origin.previous_job_id == first_job.id


def test_thread_reply_without_a_job_in_the_thread_is_ignored(
    webhook_client: Any, linked: Any
) -> None:
    assert post(webhook_client, slack(reply("just chatting"))).status_code == 204
    assert linked.jobs() == [] and linked.deliveries() == []


def test_top_level_message_is_ignored(webhook_client: Any, linked: Any) -> None:
    assert post(webhook_client, slack(load("slack", "message__top_level"))).status_code == 204


def test_thread_reply_mentioning_the_bot_is_left_to_app_mention(
    webhook_client: Any, linked: Any
) -> None:
    post(webhook_client, slack(load("slack", "app_mention__in_thread")))
    assert post(webhook_client, slack(reply(f"<@{BOT_USER}> and this"))).status_code == 204
    assert len(linked.jobs()) == 1


def test_the_bots_own_thread_messages_are_ignored(webhook_client: Any, linked: Any) -> None:
    post(webhook_client, slack(load("slack", "app_mention__in_thread")))
    payload = reply("I'm on it!")
    payload["event"].update(user=BOT_USER, bot_id="B0BOT")
    assert post(webhook_client, slack(payload)).status_code == 204
    assert len(linked.jobs()) == 1


def test_other_bots_in_the_thread_are_ignored(webhook_client: Any, linked: Any) -> None:
    post(webhook_client, slack(load("slack", "app_mention__in_thread")))
    payload = reply("Build passed")
    payload["event"].update(user="U0OTHERBOT", bot_id="B0CI")
    assert post(webhook_client, slack(payload)).status_code == 204


@pytest.mark.parametrize(
    "fixture",
    [
        "message.message_changed__edit",
        "message.message_deleted__delete",
        "message.bot_message__integration",
        "reaction_added__emoji",
    ],
)
def test_ignored_events(webhook_client: Any, linked: Any, fixture: str) -> None:
    payload = load("slack", fixture)
    if "message" in payload["event"]:
        payload["event"]["message"]["text"] = f"<@{BOT_USER}> fix it"
    assert post(webhook_client, slack(payload)).status_code == 204
    assert linked.jobs() == []


@pytest.mark.parametrize(
    "text",
    [f"`<@{BOT_USER}> fix`", f"```\n<@{BOT_USER}> fix\n```", f"&gt; <@{BOT_USER}> fix\nok"],
)
def test_mentions_in_code_or_quotes_do_nothing(webhook_client: Any, linked: Any, text: str) -> None:
    assert post(webhook_client, slack(mention(text))).status_code == 204


def test_escaped_text_never_becomes_a_mention(webhook_client: Any, linked: Any) -> None:
    payload = reply(f"&lt;@{BOT_USER}&gt; is how you write it")
    post(webhook_client, slack(load("slack", "app_mention__in_thread")))
    response = post(webhook_client, slack(payload))
    assert response.status_code == 202  # a follow-up, not a new mention
    assert linked.jobs()[1].task == f"<@{BOT_USER}> is how you write it"


# The header is in whole seconds: truncating a future time takes up to 1 s off it, so 302.
@pytest.mark.parametrize("offset", [-301, 302, -86400])
def test_stale_or_future_timestamps_are_401(webhook_client: Any, linked: Any, offset: int) -> None:
    delivery = slack(mention(f"<@{BOT_USER}> x"), timestamp=time.time() + offset)
    assert post(webhook_client, delivery).status_code == 401


def test_timestamps_inside_the_window_are_accepted(webhook_client: Any, linked: Any) -> None:
    delivery = slack(mention(f"<@{BOT_USER}> x"), timestamp=time.time() - 295)
    assert post(webhook_client, delivery).status_code == 202


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Slack-Request-Timestamp": "soon"},
        {"X-Slack-Request-Timestamp": "9" * 5000},
        {"X-Slack-Signature": "v1=" + "0" * 64},
        {"X-Slack-Signature": "v0=\xff\xfe".encode("latin-1")},
    ],
)
def test_odd_signature_headers_are_401(webhook_client: Any, linked: Any, headers: Any) -> None:
    delivery = slack(mention(f"<@{BOT_USER}> x"))
    delivery.headers.update(headers)
    assert post(webhook_client, delivery).status_code == 401


def test_form_encoded_body_is_400(webhook_client: Any, linked: Any) -> None:
    assert post(webhook_client, slack(f"payload={quote('{}')}".encode())).status_code == 400


def test_retries_with_the_same_event_id_are_duplicates(webhook_client: Any, linked: Any) -> None:
    first = post(webhook_client, slack(mention(f"<@{BOT_USER}> x")))
    retry = slack(mention(f"<@{BOT_USER}> x"))
    retry.headers.update({"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    again = post(webhook_client, retry)
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["job_id"] == first.json()["job_id"]


def test_unlinked_user_gets_a_notice(webhook_client: Any, store: Any) -> None:
    assert post(webhook_client, slack(mention(f"<@{BOT_USER}> x"))).json() == {"notice": "unlinked"}
    [notice] = store.notices()
    assert f"--external-id {ALICE}" in notice.body
    assert read_trigger(notice.context).part["thread_ts"] == "1515449483.000108"
