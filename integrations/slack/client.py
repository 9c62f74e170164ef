"""Slack's Web API through slack_sdk: the calls Resolver makes back to Slack.

Every failure leaves as a `TransientCallbackError` (retry later) or a `PermanentCallbackError`
(tell the user): `translate_errors` reads slack_sdk's errors and contract's `HttpErrors`
decides. slack_sdk's retry handlers are off: the callback tasks retry, with one attempt row per
try.
"""

from __future__ import annotations

import http.client
import io
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web import SlackResponse

from integrations.slack.mrkdwn import fit
from integrations.slack.settings import SlackSettings
from integrations.toolkit import answers
from integrations.toolkit.limits import (
    Budget,
    CapReachedError,
    DeadlineReachedError,
    Inflater,
    Limits,
    UnaskedEncodingError,
)
from resolver.contract.errors import (
    CallbackError,
    HttpErrors,
    PermanentCallbackError,
    parse_retry_after,
)
from resolver.core.logs import redact, register_secret
from resolver.core.settings import Settings

Message = dict[str, Any]

TIMEOUT_SECONDS: Final = 30
# Slack's advice: pages of no more than 200. The cap bounds a runaway cursor.
# https://api.slack.com/docs/pagination
PAGE_SIZE: Final = 200
MAX_PAGES: Final = 50
MESSAGE_LIMIT: Final = 300
ERROR_READ_LIMIT: Final = 8 * 1024  # of an error answer: its message is cut to 300 anyway
# Errors Slack answers (in an HTTP 200 or a 5xx) when trying again later can succeed.
# https://api.slack.com/methods/chat.postMessage#errors
TRANSIENT_ERRORS: Final = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
ERRORS: Final = HttpErrors(
    "Slack", says="{vendor} answered {detail} to {action} (HTTP {status})", records_ok_status=True
)
# What urllib raises when Slack cannot be reached or stops answering mid-way.
NETWORK_ERRORS: Final = (URLError, TimeoutError, ConnectionError, http.client.HTTPException)


@dataclass(frozen=True)
class BotIdentity:
    """Who the token posts as, from `auth.test`."""

    user_id: str
    bot_id: str | None


class _Unredirected(urllib.request.HTTPRedirectHandler):
    """No redirect is followed: urllib's handler sends every header of the request, the
    bot's `Authorization` too, on to wherever a redirect points. The 3xx is then the answer
    (an HTTPError, which slack_sdk reads as a failed call)."""

    def redirect_request(self, *_args: Any, **_kwargs: Any) -> None:
        return None


class UnredirectedWebClient(WebClient):
    """slack_sdk's WebClient that follows no redirect. It opens every request with
    `urllib.request.urlopen` and takes no opener, so its one method that opens one is given
    ours: a private method (checked by the tests, which a renamed one fails)."""

    def _perform_urllib_http_request_internal(
        self, url: str, req: urllib.request.Request
    ) -> dict[str, Any]:
        if not url.lower().startswith(("http://", "https://")):  # urllib also opens file://
            raise SlackRequestError(f"not an HTTP address: {url[:100]}")
        handlers: list[urllib.request.BaseHandler] = [
            urllib.request.HTTPSHandler(context=self.ssl),
            _Unredirected(),
        ]
        if self.proxy:
            handlers.append(urllib.request.ProxyHandler({"http": self.proxy, "https": self.proxy}))
        budget = Budget(Limits(seconds=float(self.timeout)))
        try:
            answer = urllib.request.build_opener(*handlers).open(req, timeout=self.timeout)
        except urllib.error.HTTPError as error:  # slack_sdk reads its body whole: give it a part
            start = _read(error, budget, ERROR_READ_LIMIT)
            error.close()
            raise urllib.error.HTTPError(
                error.url, error.code, error.msg, error.headers, io.BytesIO(start)
            ) from None
        with answer:
            charset = answer.headers.get_content_charset() or "utf-8"
            body = _read(answer, budget).decode(charset)
            return {"status": answer.status, "headers": answer.headers, "body": body}


def _read(answer: Any, budget: Budget, most: int | None = None) -> bytes:
    """The answer's body, a network read at a time, within the call's deadline and cap (at
    most `most` bytes of it, when given); past either, the error a lost connection is."""
    inflater = Inflater.of(answer.headers.get("Content-Encoding"))
    raw = iter(lambda: answer.read1(64 * 1024), b"")
    taken, size = [], 0
    try:
        for part in budget.chunks(raw, inflater):
            taken.append(part)
            size += len(part)
            if most is not None and size >= most:
                break
    except DeadlineReachedError as error:
        raise TimeoutError(str(error)) from None
    except (CapReachedError, UnaskedEncodingError) as error:
        raise UnreadableAnswerError(str(error)) from None
    return b"".join(taken)[:most]


class UnreadableAnswerError(Exception):
    """An answer past its cap, or in an encoding it does not name: Slack's unusable answer."""


def slack_session(settings: Settings, token: str, timeout: int = TIMEOUT_SECONDS) -> WebClient:
    """slack_sdk pointed at `SlackSettings.api_url` (GovSlack, a test server), no retries, no
    redirects followed."""
    return UnredirectedWebClient(
        token=token,
        base_url=SlackSettings.of(settings).api_url.rstrip("/") + "/",
        timeout=timeout,
        retry_handlers=[],
    )


@contextmanager
def translate_errors(method: str, *, tolerate: frozenset[str] = frozenset()) -> Iterator[None]:
    """Turn slack_sdk's errors during `method` (`"chat.postMessage"`) into ours; the Slack error
    codes in `tolerate` count as success (`already_reacted`). An answer read within that is not
    of the shape read is Slack's unusable answer."""
    with answers.reading(ERRORS, method):
        try:
            yield
        except SlackApiError as error:
            if error_code(error.response) not in tolerate:
                raise _from_response(method, error.response) from None
        except UnreadableAnswerError as error:
            raise ERRORS.unusable_answer(method, error) from None
        except NETWORK_ERRORS as error:
            raise ERRORS.unreachable(method, error) from None


def error_code(response: SlackResponse) -> str:
    """Slack's error code (`channel_not_found`), or what slack_sdk made of a non-JSON body."""
    data = response.data
    if not isinstance(data, dict):
        return "an unreadable answer"
    return str(data.get("error") or "an error without a code")


def _from_response(method: str, response: SlackResponse) -> CallbackError:
    return ERRORS.answered(
        method,
        response.status_code,
        _error_detail(response),
        retry_after=parse_retry_after(_header(response.headers, "retry-after")),
        transient=error_code(response) in TRANSIENT_ERRORS,
    )


def _error_detail(response: SlackResponse) -> str:
    """The error code, with the scope Slack says is missing; redacted and shortened."""
    detail = error_code(response)
    needed = response.data.get("needed") if isinstance(response.data, dict) else None
    if needed:
        detail += f" (needed: {needed})"
    return redact(detail)[:MESSAGE_LIMIT]


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return str(value[0] if isinstance(value, list) else value)
    return None


class SlackClient:
    """The Web API calls Resolver makes, as one workspace's bot."""

    def __init__(self, settings: Settings, token: str) -> None:
        register_secret(token, passing=True)
        self._settings = settings
        self._api = slack_session(settings, token)
        self._identity: BotIdentity | None = None

    def __repr__(self) -> str:
        return f"SlackClient({SlackSettings.of(self._settings).api_url!r})"

    def identity(self) -> BotIdentity:
        """The bot's user and bot ids (`auth.test`), asked once per client."""
        if self._identity is None:
            with translate_errors("auth.test"):
                answer = self._api.auth_test()
                bot_id = answer.get("bot_id")
                self._identity = BotIdentity(
                    answers.text(answer["user_id"]), str(bot_id) if bot_id else None
                )
        return self._identity

    def post(
        self,
        channel: str,
        thread_ts: str | None,
        text: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Post `text` (mrkdwn) in the channel, in the thread when `thread_ts` is set, with
        message `metadata` (`{"event_type": …, "event_payload": {…}}`) when given; returns the
        new message's ts."""
        with translate_errors("chat.postMessage"):
            answer = self._api.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=_sendable(text, "chat.postMessage"),
                unfurl_links=False,
                unfurl_media=False,
                metadata=None if metadata is None else dict(metadata),
            )
            return answers.text(answer["ts"])

    def post_ephemeral(self, channel: str, user: str, thread_ts: str | None, text: str) -> None:
        """Post `text` that only `user` sees, in the channel (in the thread when `thread_ts` is
        set). Slack keeps no copy: it cannot be found, edited or read back later.
        https://api.slack.com/methods/chat.postEphemeral"""
        with translate_errors("chat.postEphemeral"):
            self._api.chat_postEphemeral(
                channel=channel,
                user=user,
                thread_ts=thread_ts,
                text=_sendable(text, "chat.postEphemeral"),
            )

    def update(self, channel: str, ts: str, text: str) -> None:
        """Replace the text of a message the bot posted; its metadata stays as it was.
        https://docs.slack.dev/reference/methods/chat.update"""
        with translate_errors("chat.update"):
            self._api.chat_update(channel=channel, ts=ts, text=_sendable(text, "chat.update"))

    def add_reaction(self, channel: str, ts: str, name: str = "eyes") -> None:
        """React to a message; reacting twice is not an error."""
        with translate_errors("reactions.add", tolerate=frozenset({"already_reacted"})):
            self._api.reactions_add(channel=channel, timestamp=ts, name=name)

    def thread(self, channel: str, thread_ts: str, limit: int) -> list[Message]:
        """The thread's parent and its newest replies, at most `limit` messages, oldest first.

        Slack pages a thread from its start, so long threads are read to the end (up to
        `MAX_PAGES`); a parent repeated at the top of each page is counted once.
        """
        seen: set[str] = set()
        parent: Message | None = None
        replies: deque[Message] = deque(maxlen=max(limit - 1, 0))
        for page in self._thread_pages(channel, thread_ts):
            for message in page:
                ts = str(message.get("ts"))
                if ts in seen:
                    continue
                seen.add(ts)
                if parent is None:
                    parent = message
                else:
                    replies.append(message)
        thread = [] if parent is None else [parent, *replies]
        return thread[: max(limit, 0)]

    def replies_since(self, channel: str, thread_ts: str, oldest: str) -> list[Message]:
        """The thread's messages posted at or after `oldest` (a Slack ts), one page of them,
        each with its whole metadata (without `include_all_metadata`, its event type only).
        https://api.slack.com/metadata/using#direct"""
        with translate_errors("conversations.replies"):
            answer = self._api.conversations_replies(
                channel=channel,
                ts=thread_ts,
                oldest=oldest,
                inclusive=True,
                include_all_metadata=True,
                limit=PAGE_SIZE,
            )
        return _messages(answer)

    def _thread_pages(self, channel: str, thread_ts: str) -> Iterator[list[Message]]:
        cursor: str | None = None  # slack_sdk leaves out arguments that are None
        for _ in range(MAX_PAGES):
            with translate_errors("conversations.replies"):
                answer = self._api.conversations_replies(
                    channel=channel, ts=thread_ts, limit=PAGE_SIZE, cursor=cursor
                )
            yield _messages(answer)
            cursor = (answer.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return


def _messages(answer: SlackResponse) -> list[Message]:
    return [m for m in answer.get("messages") or [] if isinstance(m, dict)]


def _sendable(text: str, method: str) -> str:
    """`text` cut to Slack's limit; an empty text is refused before Slack says `no_text`."""
    if not text.strip():
        raise PermanentCallbackError(f"nothing to send with {method}: the text is empty")
    return fit(text)
