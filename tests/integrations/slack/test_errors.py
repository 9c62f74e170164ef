"""One fate per failure: rate limits, Slack's own 'try later' errors, 5xx and network errors are
transient; every other Slack error is permanent. Messages never hold the token."""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from integrations.slack.client import SlackClient
from integrations.slack.standin.api import SlackAPI
from resolver.contract.errors import CallbackError, PermanentCallbackError, TransientCallbackError
from resolver.core.settings import Settings
from tests.integrations.slack.conftest import BOT_TOKEN, CHANNEL, make_settings
from tests.support.ports import free_port
from tests.support.serving import served_answer, served_handler


def fail_once(
    client: SlackClient, api: SlackAPI, fault: int | str, **options: object
) -> CallbackError:
    api.fail("chat.postMessage", fault, **options)  # type: ignore[arg-type]
    with pytest.raises(CallbackError) as failed:
        client.post(CHANNEL, None, "Queued")
    return failed.value


@pytest.mark.parametrize(
    ("fault", "headers", "status", "retry_after"),
    [
        (429, {"Retry-After": "7"}, 429, 7.0),
        (429, {}, 429, None),
        ("ratelimited", {}, 200, None),
        (500, {}, 500, None),
        (503, {"Retry-After": "12"}, 503, 12.0),
        ("internal_error", {}, 200, None),
        ("fatal_error", {}, 200, None),
        ("service_unavailable", {}, 200, None),
        ("request_timeout", {}, 200, None),
    ],
    ids=str,
)
def test_rate_limits_and_slack_outages_are_transient(
    client: SlackClient,
    slack_api: SlackAPI,
    fault: int | str,
    headers: dict[str, str],
    status: int,
    retry_after: float | None,
) -> None:
    error = fail_once(client, slack_api, fault, headers=headers)
    assert isinstance(error, TransientCallbackError)
    assert (error.status, error.retry_after) == (status, retry_after)
    client.post(CHANNEL, None, "Queued")  # the next try goes through
    assert [r.status for r in slack_api.calls("chat.postMessage")] == [status, 200]


def test_a_rate_limit_names_the_method_and_the_wait(
    client: SlackClient, slack_api: SlackAPI
) -> None:
    error = fail_once(client, slack_api, 429, headers={"Retry-After": "30"})
    assert str(error) == "Slack answered ratelimited to chat.postMessage (HTTP 429)"


def test_a_gateway_page_instead_of_json_is_transient_and_short(
    client: SlackClient, slack_api: SlackAPI
) -> None:
    page = f"<html><body>502 Bad Gateway {BOT_TOKEN} {'x' * 5000}</body></html>"
    error = fail_once(client, slack_api, 502, body=page)
    assert isinstance(error, TransientCallbackError)
    assert error.status == 502
    assert BOT_TOKEN not in str(error) and len(str(error)) < 400


@pytest.mark.parametrize(
    "code",
    ["channel_not_found", "not_in_channel", "is_archived", "msg_too_long", "invalid_auth"],
)
def test_other_slack_errors_are_permanent_and_say_why(
    client: SlackClient, slack_api: SlackAPI, code: str
) -> None:
    error = fail_once(client, slack_api, code)
    assert type(error) is PermanentCallbackError
    assert str(error) == f"Slack answered {code} to chat.postMessage (HTTP 200)"


def test_a_channel_the_bot_is_not_in_is_permanent(client: SlackClient, slack_api: SlackAPI) -> None:
    slack_api.add_channel("C0PRIVATE", member=False)
    slack_api.add_channel("C0OLD", archived=True)
    for channel, code in [("C0PRIVATE", "not_in_channel"), ("C0OLD", "is_archived")]:
        with pytest.raises(PermanentCallbackError, match=code):
            client.post(channel, None, "Queued")
    with pytest.raises(PermanentCallbackError, match="channel_not_found"):
        client.post("C0NOWHERE", None, "Queued")


def test_a_missing_scope_names_the_scope(client: SlackClient, slack_api: SlackAPI) -> None:
    answer = {"ok": False, "error": "missing_scope", "needed": "chat:write", "provided": "x"}
    error = fail_once(client, slack_api, 200, body=json.dumps(answer))
    assert type(error) is PermanentCallbackError
    assert "missing_scope (needed: chat:write)" in str(error)


@pytest.mark.parametrize(
    ("token", "code"), [("xoxb-not-a-token", "invalid_auth"), ("", "not_authed")]
)
def test_a_wrong_or_missing_token_is_permanent(
    settings: Settings, slack_api: SlackAPI, token: str, code: str
) -> None:
    client = SlackClient(settings, token)
    with pytest.raises(PermanentCallbackError) as failed:
        client.post(CHANNEL, None, "Queued")
    assert str(failed.value) == f"Slack answered {code} to chat.postMessage (HTTP 200)"
    assert slack_api.channels[CHANNEL].messages == {}


def test_an_unreachable_api_is_transient() -> None:
    closed_port = free_port()  # reserved for this test: nothing listens on it
    client = SlackClient(make_settings(f"http://127.0.0.1:{closed_port}/api/"), BOT_TOKEN)
    with pytest.raises(TransientCallbackError) as failed:
        client.post(CHANNEL, None, "Queued")
    assert str(failed.value) == "Slack could not be reached for chat.postMessage: URLError"
    assert failed.value.status is None


def test_a_connection_dropped_without_an_answer_is_transient(
    client: SlackClient, slack_api: SlackAPI
) -> None:
    slack_api.drop("conversations.replies")
    with pytest.raises(TransientCallbackError, match="could not be reached"):
        client.thread(CHANNEL, "1.000001", 50)
    assert [r.status for r in slack_api.calls("conversations.replies")] == [0]


def test_errors_of_every_method_are_mapped(client: SlackClient, slack_api: SlackAPI) -> None:
    ts = slack_api.add_message(CHANNEL, "U0ALICE", "hi")
    calls: dict[str, Callable[[], object]] = {
        "auth.test": client.identity,
        "chat.update": lambda: client.update(CHANNEL, ts, "x"),
        "reactions.add": lambda: client.add_reaction(CHANNEL, ts),
        "conversations.replies": lambda: client.thread(CHANNEL, ts, 5),
    }
    for method, call in calls.items():
        slack_api.fail(method, 429, headers={"Retry-After": "2"})
        with pytest.raises(TransientCallbackError) as failed:
            call()
        assert failed.value.retry_after == 2.0 and method in str(failed.value)


@pytest.mark.parametrize("answer", [b'{"ok": true}', b'{"ok": true, "user_id": null, "ts": 1}'])
def test_an_ok_answer_without_what_was_asked_is_an_unusable_answer(answer: bytes) -> None:
    """`ok` with no user id is no identity (it was taken as the user 'None' and kept), and a
    posted message with no ts no message."""
    with served_answer(answer) as url:
        client = SlackClient(make_settings(url), BOT_TOKEN)
        with pytest.raises(PermanentCallbackError, match="unusable"):
            client.identity()
        with pytest.raises(PermanentCallbackError, match="unusable"):
            client.post(CHANNEL, None, "Queued")


class _Elsewhere(BaseHTTPRequestHandler):
    """Sends every call on to `target` with a redirect; what the target heard is kept."""

    target = ""
    status = 302
    heard: list[str | None] = []

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).heard.append(self.headers.get("Authorization"))
        body = b'{"ok": true, "user_id": "U1", "ts": "1.2"}'
        self.send_response(type(self).status if type(self).target else 200)
        if type(self).target:
            self.send_header("Location", f"{type(self).target}/api/auth.test")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *_args: object) -> None:
        return None


class _Other(_Elsewhere):
    target = ""
    heard: list[str | None] = []


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_the_token_is_never_sent_where_a_redirect_points(status: int) -> None:
    """A redirect is the answer, not a way on: urllib sent the bot's `Authorization` on to
    the host it named, and took that host's answer as the bot's identity."""
    with served_handler(_Other) as other, served_handler(_Elsewhere) as slack:
        _Elsewhere.target, _Elsewhere.status = other.replace("127.0.0.1", "localhost"), status
        _Other.heard = []
        client = SlackClient(make_settings(slack), BOT_TOKEN)
        with pytest.raises(PermanentCallbackError, match=str(status)):
            client.identity()
        with pytest.raises(PermanentCallbackError, match=str(status)):
            client.thread(CHANNEL, "1.2", 5)  # a GET
    assert _Other.heard == []
