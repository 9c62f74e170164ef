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

Here: the server, its set-up API and authentication. The workspace's dataclasses are in
state, the methods' handlers in methods.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from integrations.slack.app_manifest import BOT_SCOPES
from integrations.slack.standin.methods import METHODS, TEXT_LIMIT, Method
from integrations.slack.standin.oidc import OIDC_ROUTES, SlackOIDC
from integrations.slack.standin.state import (
    TEAM_ID,
    Answer,
    Call,
    Channel,
    Ephemeral,
    Identity,
    Message,
    error,
    ok,
)
from integrations.standin.server import Fault, StandIn, web_params

# Tests import the stand-in's names from here, wherever they are defined.
__all__ = [
    "METHODS",
    "TEAM_ID",
    "TEXT_LIMIT",
    "Answer",
    "Call",
    "Channel",
    "Ephemeral",
    "Identity",
    "Message",
    "Method",
    "Recorded",
    "SlackAPI",
    "error",
    "ok",
]

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
        self.scopes: dict[str, tuple[str, ...]] = {}  # token -> the scopes it was granted
        self.channels: dict[str, Channel] = {}
        self.oidc = SlackOIDC()  # Sign in with Slack: slack_oidc
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
        scopes: tuple[str, ...] = BOT_SCOPES,
    ) -> Identity:
        """A token the API accepts, acting as the app's bot user (`xoxb-…`); without a bot id,
        as a person (`xoxp-…`). `scopes` are those the install granted (the manifest's)."""
        identity = Identity(user_id, name, bot_id=bot_id)
        self.tokens[token] = identity
        self.scopes[token] = scopes
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

    def add_oauth_app(self, client_id: str, secret: str) -> None:
        """An app people may Sign in with Slack to (its client id and secret)."""
        self.oidc.apps[client_id] = secret

    def sign_in_as(self, user_id: str, *, name: str | None = None, team_id: str = TEAM_ID) -> None:
        """Who the browser is signed in to Slack as; they approve every app."""
        self.oidc.signed_in = Identity(user_id, name or user_id.lower(), team_id)

    def ephemeral(self, channel_id: str, user: str) -> list[Message]:
        """The messages only `user` was shown in the channel, oldest first."""
        return [e.message for e in self.channels[channel_id].ephemeral if e.user == user]

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
        oidc = OIDC_ROUTES.get(f"{http_method} {url.path}")
        if oidc is not None:  # Sign in with Slack: authenticated by the client, not a token
            with self.lock:
                return oidc(self, web_params(raw_path, headers, raw), headers)
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
        # Slack names a token's scopes on every answer. https://api.slack.com/scopes
        granted = {"X-OAuth-Scopes": ",".join(self.scopes.get(token, ()))}
        return (*handler(self, Call(params, caller)), granted)

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
