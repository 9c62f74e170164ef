"""A local Slack Web API on loopback: the methods Resolver calls, in Slack's wire format.

    api = SlackAPI()
    bot = api.add_bot("xoxb-test-token")              # the app's bot user in team T0TEAM
    api.add_channel("C0GENERAL")
    ts = api.add_message("C0GENERAL", "U0ALICE", "<@U0BOT> fix it")
    api.fail("chat.postMessage", "ratelimited", headers={"Retry-After": "3"})  # next call
    api.fail("chat.update", 503, times=2)             # the next two calls
    api.fail("chat.postMessage", 503, applied=True)   # posts, then answers 503 (a lost answer)
    ... point RESOLVER_SLACK_API_URL at api.base_url ...
    api.requests                                      # everything it was sent, in order

Like Slack, every method is `POST /api/<method>` (GET with a query string works too) with a
form-encoded or JSON body, the token as `Authorization: Bearer …` (or a `token` form field),
and almost every answer is HTTP 200 with `{"ok": true, …}` or `{"ok": false, "error": code}`;
rate limits are HTTP 429 with `Retry-After`. https://api.slack.com/web
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.standin import Fault, StandIn

TEAM_ID = "T0TEAM"
TEXT_LIMIT = 40_000
_TS = re.compile(r"^\d+\.\d+$")
_EMOJI = re.compile(r"^[a-z0-9_+-]+$")
_HTTP_ERRORS = {429: "ratelimited", 503: "service_unavailable"}


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it; `params` merges the query and the body."""

    method: str
    http_method: str
    headers: dict[str, str]
    content_type: str
    params: dict[str, Any]
    status: int
    error: str | None


@dataclass(frozen=True)
class Identity:
    """Who a token acts as: a bot user (with its bot id) or a person."""

    user_id: str
    name: str
    team_id: str = TEAM_ID
    bot_id: str | None = None


@dataclass
class Message:
    ts: str
    text: str
    user: str
    bot_id: str | None = None
    thread_ts: str | None = None
    reactions: dict[str, list[str]] = field(default_factory=dict)
    edited_ts: str | None = None
    metadata: dict[str, Any] | None = None  # {"event_type": …, "event_payload": {…}}


@dataclass
class Channel:
    id: str
    member: bool = True
    archived: bool = False
    messages: dict[str, Message] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    params: dict[str, Any]
    caller: Identity


Answer = tuple[int, dict[str, Any]]
Method = Callable[["SlackAPI", Call], Answer]


def ok(**fields: Any) -> Answer:
    return 200, {"ok": True, **fields}


def error(code: str) -> Answer:
    return 200, {"ok": False, "error": code}


class SlackAPI(StandIn[Recorded]):
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`.

    `parent_on_every_page` repeats a thread's parent message at the top of each page of
    `conversations.replies`, as Slack has been seen to do; clients must not count it twice.
    """

    TEXT_TYPE = "text/html; charset=utf-8"
    TEXT_BODIES = (str,)  # a fault's page from a proxy in front of Slack

    def __init__(self, *, parent_on_every_page: bool = True) -> None:
        self.parent_on_every_page = parent_on_every_page
        self.tokens: dict[str, Identity] = {}
        self.channels: dict[str, Channel] = {}
        self._drops: dict[str, int] = {}
        self._last_ts = 0
        super().__init__()

    # --- set-up and inspection from tests
    @property
    def base_url(self) -> str:
        return f"{self.origin}/api/"

    def add_bot(
        self,
        token: str,
        *,
        user_id: str = "U0BOT",
        bot_id: str | None = "B0BOT",
        name: str = "resolver",
    ) -> Identity:
        """A token the API accepts, acting as the app's bot user (`xoxb-…`); without a bot id,
        as a person (`xoxp-…`)."""
        identity = Identity(user_id, name, bot_id=bot_id)
        self.tokens[token] = identity
        return identity

    def add_channel(self, channel_id: str, *, member: bool = True, archived: bool = False) -> None:
        self.channels[channel_id] = Channel(channel_id, member=member, archived=archived)

    def add_message(
        self,
        channel_id: str,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        bot_id: str | None = None,
        ts: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """A message already in the channel (or a thread's reply); returns its ts."""
        with self.lock:
            ts = ts or self.new_ts()
            message = Message(ts, text, user, bot_id=bot_id, thread_ts=thread_ts, metadata=metadata)
            self.channels[channel_id].messages[message.ts] = message
            return message.ts

    def fail(
        self,
        method: str,
        fault: int | str,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: str | None = None,
        applied: bool = False,
    ) -> None:
        """Answer the next `times` calls to `method` with an HTTP status (429, 5xx: JSON error
        unless a raw `body` is given) or with a Slack error code in an HTTP 200. `applied`: each
        call takes effect before the fault answers it (a lost answer)."""
        if method not in METHODS:
            raise KeyError(f"no such method: {method}")
        if isinstance(fault, str):
            status, code = 200, fault
        else:
            default = "internal_error" if fault >= 500 else "invalid_request"
            status, code = fault, _HTTP_ERRORS.get(fault, default)
        answer = {"ok": False, "error": code} if body is None else body
        self._faults.queue(method, Fault(status, times, headers or {}, answer, applied))

    def drop(self, method: str, *, times: int = 1) -> None:
        """Close the connection of the next `times` calls to `method` without answering."""
        self._drops[method] = times

    def calls(self, method: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.method == method]

    def thread(self, channel_id: str, thread_ts: str) -> list[Message]:
        """The parent and its replies, oldest first."""
        messages = self.channels[channel_id].messages.values()
        return sorted((m for m in messages if thread_ts in (m.ts, m.thread_ts)), key=lambda m: m.ts)

    def new_ts(self) -> str:
        """A message timestamp, `seconds.micros`, unique and increasing as on Slack."""
        with self.lock:
            self._last_ts = max(self._last_ts + 1, int(time.time() * 1_000_000))
            return f"{self._last_ts // 1_000_000}.{self._last_ts % 1_000_000:06d}"

    # --- request handling (called by the server thread)
    def handle(
        self, http_method: str, raw_path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, Any] | str, dict[str, str]] | None:
        """Record the request and answer it: status, JSON body (or raw text), extra headers;
        None when the connection is to be dropped (recorded with status 0)."""
        url = urlsplit(raw_path)
        method = url.path.removeprefix("/api/")
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        params: dict[str, Any] = {k: v[-1] for k, v in parse_qs(url.query).items()}
        params |= _body_params(content_type, raw)
        with self.lock:
            if self._drops.get(method, 0) > 0:
                self._drops[method] -= 1
                self.requests.append(
                    Recorded(method, http_method, headers, content_type, params, 0, None)
                )
                return None
            status, answer, extra = self._dispatch(method, headers, content_type, params)
            code = answer.get("error") if isinstance(answer, dict) else None
            self.requests.append(
                Recorded(method, http_method, headers, content_type, params, status, code)
            )
            return status, answer, extra

    def _dispatch(
        self, method: str, headers: dict[str, str], content_type: str, params: dict[str, Any]
    ) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        handler = METHODS.get(method)
        if handler is None:
            return 404, {"ok": False, "error": "unknown_method", "req_method": method}, {}
        fault = self._faults.take(method)
        if fault is None:
            return self._serve(handler, headers, content_type, params)
        if fault.applied:
            self._serve(handler, headers, content_type, params)
        return fault.status, fault.body, fault.headers

    def _serve(
        self, handler: Method, headers: dict[str, str], content_type: str, params: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Authenticate the call and answer it with the method's handler."""
        token = _token(headers, content_type, params)
        if token is None:
            return (*error("not_authed"), {})
        caller = self.tokens.get(token)
        if caller is None:
            return (*error("invalid_auth"), {})
        return (*handler(self, Call(params, caller)), {})

    def channel(self, call: Call) -> Channel | Answer:
        """The call's channel, or the error Slack gives when it cannot be used."""
        found = self.channels.get(str(call.params.get("channel") or ""))
        if found is None:
            return error("channel_not_found")
        if not found.member:
            return error("not_in_channel")
        return found


def _body_params(content_type: str, raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    if content_type == "application/json":
        data = json.loads(raw)
        return data if isinstance(data, dict) else {}
    return {k: v[-1] for k, v in parse_qs(raw.decode()).items()}


def _token(headers: dict[str, str], content_type: str, params: dict[str, Any]) -> str | None:
    """Slack reads `Authorization: Bearer`, or a `token` field, but never one in a JSON body."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme == "Bearer" and value:
        return value
    field_token = params.get("token")
    if content_type != "application/json" and isinstance(field_token, str) and field_token:
        return field_token
    return None


# --- methods, one handler each -------------------------------------------------------------


def _message_json(
    channel: Channel, message: Message, *, all_metadata: bool = True
) -> dict[str, Any]:
    """The message as Slack shows it; without `all_metadata`, its metadata's event type only."""
    data: dict[str, Any] = {
        "type": "message",
        "ts": message.ts,
        "text": message.text,
        "user": message.user,
        "team": TEAM_ID,
    }
    if message.bot_id:
        data |= {"bot_id": message.bot_id, "app_id": "A0RESOLVER"}
    if message.thread_ts:
        data["thread_ts"] = message.thread_ts
        parent = channel.messages.get(message.thread_ts)
        if parent is not None and parent.ts != message.ts:
            data["parent_user_id"] = parent.user
    replies = [m for m in channel.messages.values() if m.thread_ts == message.ts != m.ts]
    if replies:
        data |= {"thread_ts": message.ts, "reply_count": len(replies)}
    if message.edited_ts:
        data["edited"] = {"user": message.user, "ts": message.edited_ts}
    if message.reactions:
        data["reactions"] = [
            {"name": name, "users": users, "count": len(users)}
            for name, users in message.reactions.items()
        ]
    if message.metadata:
        metadata = message.metadata
        data["metadata"] = metadata if all_metadata else {"event_type": metadata["event_type"]}
    return data


def _text(call: Call) -> str | Answer:
    text = call.params.get("text")
    if not isinstance(text, str) or not text.strip():
        return error("no_text")
    if len(text) > TEXT_LIMIT:
        return error("msg_too_long")
    return text


def _metadata(raw: object) -> dict[str, Any] | Answer:
    """The `metadata` argument: a JSON object (a string in a form body) with an `event_type`
    and an `event_payload` object; `{}` for none. Slack enforces no naming pattern.
    https://docs.slack.dev/reference/methods/chat.postMessage (errors),
    https://api.slack.com/reference/metadata"""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return error("invalid_metadata_format")
    if not isinstance(raw, dict):
        return error("invalid_metadata_format")
    if not raw:
        return {}
    event_type, payload = raw.get("event_type"), raw.get("event_payload")
    if not (isinstance(event_type, str) and event_type and isinstance(payload, dict)):
        return error("invalid_metadata_schema")
    return {"event_type": event_type, "event_payload": payload}


def _flag(value: object) -> bool:
    """A boolean argument: `true` or `1` (slack_sdk sends `1`)."""
    return value is True or str(value).lower() in {"1", "true"}


def auth_test(api: SlackAPI, call: Call) -> Answer:
    me = call.caller
    fields = {"bot_id": me.bot_id} if me.bot_id else {}
    return ok(
        url="https://resolver-test.slack.com/",
        team="Resolver Test",
        user=me.name,
        team_id=me.team_id,
        user_id=me.user_id,
        is_enterprise_install=False,
        **fields,
    )


def post_message(api: SlackAPI, call: Call) -> Answer:
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    if channel.archived:
        return error("is_archived")
    text = _text(call)
    if not isinstance(text, str):
        return text
    metadata = _metadata(call.params.get("metadata", {}))
    if isinstance(metadata, tuple):
        return metadata
    thread_ts = call.params.get("thread_ts")
    if thread_ts is not None and not _TS.match(str(thread_ts)):
        return error("invalid_thread_ts")
    parent = channel.messages.get(str(thread_ts)) if thread_ts else None
    # A reply to a reply joins the parent's thread.
    root = (parent.thread_ts or parent.ts) if parent else thread_ts
    me = call.caller
    message = Message(
        api.new_ts(), text, me.user_id, bot_id=me.bot_id, thread_ts=root, metadata=metadata or None
    )
    channel.messages[message.ts] = message
    return ok(channel=channel.id, ts=message.ts, message=_message_json(channel, message))


def update_message(api: SlackAPI, call: Call) -> Answer:
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    message = channel.messages.get(str(call.params.get("ts") or ""))
    if message is None:
        return error("message_not_found")
    if message.user != call.caller.user_id:
        return error("cant_update_message")
    text = _text(call)
    if not isinstance(text, str):
        return text
    # Without `metadata` the message keeps its own; `{}` removes it.
    # https://docs.slack.dev/reference/methods/chat.update
    metadata = _metadata(call.params["metadata"]) if "metadata" in call.params else None
    if isinstance(metadata, tuple):
        return metadata
    if metadata is not None:
        message.metadata = metadata or None
    message.text, message.edited_ts = text, api.new_ts()
    data = _message_json(channel, message)
    return ok(channel=channel.id, ts=message.ts, text=text, message=data)


def add_reaction(api: SlackAPI, call: Call) -> Answer:
    if not call.params.get("channel") or not call.params.get("timestamp"):
        return error("no_item_specified")
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    message = channel.messages.get(str(call.params["timestamp"]))
    if message is None:
        return error("message_not_found")
    name = str(call.params.get("name") or "")
    if not _EMOJI.match(name):
        return error("invalid_name")
    users = message.reactions.setdefault(name, [])
    if call.caller.user_id in users:
        return error("already_reacted")
    users.append(call.caller.user_id)
    return ok()


def replies(api: SlackAPI, call: Call) -> Answer:
    channel = api.channel(call)
    if not isinstance(channel, Channel):
        return channel
    parent = channel.messages.get(str(call.params.get("ts") or ""))
    if parent is None:
        return error("thread_not_found")
    thread = api.thread(channel.id, parent.thread_ts or parent.ts)
    after = _after_oldest(call)
    if after is None:
        return error("invalid_ts_oldest")
    window = [m for m in thread if after(m)]
    start = _cursor_start(call.params.get("cursor"), window)
    if start is None:
        return error("invalid_cursor")
    limit = max(1, min(int(call.params.get("limit") or 1000), 1000))
    page = window[start : start + limit]
    if start > 0 and api.parent_on_every_page and window[:1] == thread[:1]:
        page = [thread[0], *page]
    # Without include_all_metadata, a message's metadata is its event type only.
    # https://api.slack.com/metadata/using#direct
    all_metadata = _flag(call.params.get("include_all_metadata"))
    answer: dict[str, Any] = {
        "messages": [_message_json(channel, m, all_metadata=all_metadata) for m in page],
        "has_more": start + limit < len(window),
    }
    if answer["has_more"]:
        next_ts = window[start + limit].ts
        cursor = base64.b64encode(f"next_ts:{next_ts}".encode()).decode()
        answer["response_metadata"] = {"next_cursor": cursor}
    return ok(**answer)


def _after_oldest(call: Call) -> Callable[[Message], bool] | None:
    """Whether a message is after `oldest` (a ts; at it too with `inclusive`); None when
    `oldest` is no timestamp."""
    try:
        oldest = Decimal(str(call.params.get("oldest") or 0))
    except InvalidOperation:
        return None
    if _flag(call.params.get("inclusive")):
        return lambda m: Decimal(m.ts) >= oldest
    return lambda m: Decimal(m.ts) > oldest


def _cursor_start(cursor: object, thread: list[Message]) -> int | None:
    if not cursor:
        return 0
    try:
        next_ts = base64.b64decode(str(cursor)).decode().removeprefix("next_ts:")
    except ValueError:
        return None
    positions = [i for i, m in enumerate(thread) if m.ts == next_ts]
    return positions[0] if positions else None


METHODS: dict[str, Method] = {
    "auth.test": auth_test,
    "chat.postMessage": post_message,
    "chat.update": update_message,
    "reactions.add": add_reaction,
    "conversations.replies": replies,
}
