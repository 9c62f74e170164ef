"""The webhook HTTP edge: body limit → verify → parse → route → dedup + insert → publish.

Status codes, decided here and nowhere else:
- 202 `{"job_id": …}` a job was created (`queued_behind` when it waits for a cap);
- 200 `{"job_id": …, "duplicate": true}` a delivery seen before, with the first job's id;
- 200 `{"notice": "unlinked"}` the sender has no linked account: no job, a notice is recorded
  for the callback queue to send (200, not 202, because nothing was queued to run);
- 200 `{"challenge": …}` a handshake (Slack url_verification);
- 204 an event we deliberately ignore (and GitHub `ping`);
- 400 malformed body, 401 bad or missing signature or stale timestamp, 404 provider not
  configured, 413 body over `RESOLVER_MAX_BODY_BYTES`, 503 (with Retry-After) the database is
  unavailable: locked, busy, unreachable, or its schema not this code's (an upgrade under way).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

from prometheus_client import Counter
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from integrations import registry
from resolver.contract.inbound import (
    Challenge,
    Headers,
    Integration,
    MalformedError,
    Policy,
    SignatureError,
    TooLargeError,
    Trigger,
    WebhookError,
    WebhookEvent,
    ignored_sender,
    route_event,
)
from resolver.contract.pulls import PullChange
from resolver.core import tracing
from resolver.core.logs import log
from resolver.core.metrics import IGNORED_EVENTS
from resolver.core.settings import Settings
from resolver.features.review_requests.contract import as_review_request
from resolver.ingress.batching import write
from resolver.ingress.concerns import decide, in_process_store, needs_standing, why_not_ours
from resolver.ingress.intake import Accepted, Pending
from resolver.ingress.pulls import pull_change, record_pull
from resolver.store.availability import unavailable
from resolver.store.db import StoreError

logger = logging.getLogger(__name__)

Record = Callable[[Pending], Awaitable[Accepted]]


DRAIN_BYTES: Final = 32 * 1024 * 1024
"""The most of a refused, too-large body that is read and thrown away so that the sender, still
sending, gets to read its 413 rather than a reset connection. GitHub sends up to 25 MB."""

INLINE_BODY_BYTES: Final = 64 * 1024
"""Bodies up to this size are verified and parsed on the event loop. Under the GIL a worker thread
does the work no sooner; it only keeps a long parse from stalling other requests, and for a small
body the hop there and back costs half as much as the work."""


class Webhook:
    """The POST handler of one integration, as a bare ASGI app: a delivery is read from the
    ASGI messages and answered without Starlette's Request, routing or middleware, which cost
    an ignored delivery more CPU than its verify and route (bench/ingress.py). The app mounts
    it in front of its router (`app.Webhooks`); a Starlette `Route` takes it as it is."""

    def __init__(
        self, integration: Integration, settings_now: Callable[[], Settings], record: Record
    ) -> None:
        self.integration, self.settings_now, self.record = integration, settings_now, record

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = await self.answer(scope, receive)
        await answer(scope, receive, send)

    async def answer(self, scope: Scope, receive: Receive) -> Response:
        """The answer to one delivery, with every refusal mapped to its status."""
        integration, settings = self.integration, self.settings_now()
        if not integration.enabled(settings):
            return JSONResponse({"error": "not found"}, status_code=404)
        try:
            headers = {
                name.decode("latin-1").lower(): value.decode("latin-1")
                for name, value in scope["headers"]
            }
            body = await read_body(headers, receive, settings.max_body_bytes)
            if len(body) <= INLINE_BODY_BYTES:
                routed, change = take(integration, headers, body, settings)
            else:  # verifying and parsing a large body is CPU work: keep it off the event loop
                routed, change = await run_in_threadpool(take, integration, headers, body, settings)
            if change is not None:
                await run_in_threadpool(record_pull, integration.name, change)
            if isinstance(routed, Response):
                return routed
            if needs_standing(routed.trigger):
                why = await _decided(integration.name, routed.trigger)
                if why is not None:
                    return _ignored(integration.name, routed.event.key, why)
            return _answer(await self.record(routed))
        except WebhookError as error:
            return _refusal(integration.name, error)
        except StoreError as error:
            if not await run_in_threadpool(unavailable, error):
                raise  # a bug: 500, and its traceback in the log
            log(logger, logging.ERROR, f"webhook.{integration.name}.database", error=repr(error))
            return JSONResponse({"error": "unavailable"}, status_code=503, headers=_RETRY)


def endpoint(
    integration: Integration, settings_now: Callable[[], Settings], record: Record = write
) -> Webhook:
    """The POST handler of one integration. The composition root gives `settings_now`, read
    once per delivery (so a webhook secret stored by /setup takes effect without a restart).
    `record` stores a routed trigger (bench/ingress swaps it to measure the path without its
    write)."""
    return Webhook(integration, settings_now, record)


def route(
    integration: Integration, headers: Headers, body: bytes, settings: Settings
) -> Pending | Response:
    """Verify, parse and route one delivery: the trigger to record, or the answer already."""
    return take(integration, headers, body, settings)[0]


def take(
    integration: Integration, headers: Headers, body: bytes, settings: Settings
) -> tuple[Pending | Response, PullChange | None]:
    """Verify and parse one delivery; route it, and read what it changes about one of the bot's
    own pull requests (kept apart from routing: `ingress.pulls`)."""
    integration.verify(headers, body, settings, time.time())
    event = integration.parse(headers, body)
    policy = policy_for(settings)
    return _routed(integration, event, policy, settings), pull_change(integration, event, policy)


def _routed(
    integration: Integration, event: WebhookEvent, policy: Policy, settings: Settings
) -> Pending | Response:
    try:
        outcome = route_event(integration.routes, event, policy)
    except MalformedError as error:
        raise MalformedError(f"{error} (delivery {event.delivery_key})") from error
    if isinstance(outcome, Challenge):
        return JSONResponse({"challenge": outcome.value})
    if outcome is not None and registry.get(integration.name).post_review is not None:
        outcome = as_review_request(outcome)  # where the provider can post a review
    why = _why_ignored(integration, event, outcome, policy)
    if outcome is None or why is not None:
        return _ignored(integration.name, event.key, why or "not a trigger")
    return Pending(integration.name, event, outcome, settings, tracing.carrier())


async def _decided(name: str, trigger: Trigger) -> str | None:
    """`why_not_ours`: its one indexed read on the event loop where the database is a file of
    this host: there it is CPU work that a worker thread does no sooner under the GIL, and the
    hop there and back cost a default-branch push more CPU than the read (bench/ingress's mix).
    A database across a network is waited for in a thread, the event loop free meanwhile. So is
    the write a decision may need (rarely: the first such event of a repository): on the event
    loop, a write lock held elsewhere (an upgrade's) stalled every request for SQLite's busy
    timeout."""
    if not in_process_store():
        return await run_in_threadpool(why_not_ours, name, trigger)
    decision = decide(name, trigger)
    if decision.note is not None:
        await run_in_threadpool(decision.note)
    return decision.why


def _ignored(provider: str, key: str, why: str) -> Response:
    """204 for a delivery that cannot concern us: logged at debug, counted by reason."""
    if logger.isEnabledFor(logging.DEBUG):
        log(logger, logging.DEBUG, f"webhook.{provider}.ignored", key=key, why=why)
    _ignored_count(provider, why).inc()
    return Response(status_code=204)


@functools.cache
def _ignored_count(provider: str, why: str) -> Counter:
    """The counter of one reason, looked up once: the reasons are a fixed set of the code's own
    strings, and `labels` costs an ignored delivery a tenth of its verify and route."""
    return IGNORED_EVENTS.labels(provider, why)


def _why_ignored(
    integration: Integration, event: WebhookEvent, outcome: Trigger | None, policy: Policy
) -> str | None:
    if event.key not in integration.routes:
        return "ignored event" if event.key in integration.ignored else "unrouted event"
    if outcome is None:
        return "not a trigger"
    # A red check's sender is CI (or the bot, whose push started it); it acts for the branch's
    # requester, as the intake finds them.
    # A push to the default branch acts for the bot's branches' requesters, whoever pushed.
    from_ci = outcome.ci_branch is not None or outcome.bot_branches
    return None if from_ci else ignored_sender(outcome.sender, policy)


async def read_body(headers: Headers, receive: Receive, limit: int) -> bytes:
    """The raw body, refused with TooLargeError once it passes `limit` bytes. The rest of a
    refused body is read and thrown away (up to DRAIN_BYTES), so that a sender still sending
    gets to read the 413 rather than a reset connection."""
    declared = headers.get("content-length")
    if declared is not None:
        if not declared.isascii() or not declared.isdigit():
            raise MalformedError("bad Content-Length")
        if int(declared) > limit:
            if int(declared) <= DRAIN_BYTES:
                await _discard(receive, DRAIN_BYTES)
            raise TooLargeError(f"Content-Length {declared} over {limit}")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk: bytes = message.get("body", b"")
        size, more = size + len(chunk), message.get("more_body", False)
        if size > limit:
            if more:
                await _discard(receive, DRAIN_BYTES - size)
            raise TooLargeError(f"body over {limit} bytes")
        chunks.append(chunk)
        if not more:
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _discard(receive: Receive, budget: int) -> None:
    """Read the rest of the body into nothing, stopping after `budget` bytes or at its end."""
    while budget >= 0:
        message = await receive()
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            return
        budget -= len(message.get("body", b""))


def policy_for(settings: Settings) -> Policy:
    """The routing policy of `settings`, built once per settings object (settings are cached)."""
    cached = _POLICIES.get(id(settings))
    if cached is not None and cached[0] is settings:
        return cached[1]
    ids = frozenset(i.strip() for i in settings.bot_account_ids.split(",") if i.strip())
    policy = Policy(
        bot_name=settings.bot_name,
        trigger_label=settings.trigger_label,
        allowed_bots=settings.allowed_bot_logins,
        bot_account_ids=ids,
    )
    _POLICIES.clear()  # one settings object lives at a time; tests swap it
    _POLICIES[id(settings)] = (settings, policy)
    return policy


_POLICIES: dict[int, tuple[Settings, Policy]] = {}


_RETRY = {"Retry-After": "5"}
_STATUS: dict[type[WebhookError], tuple[int, str, str]] = {
    SignatureError: (401, "bad_signature", "bad signature"),
    MalformedError: (400, "malformed", "malformed request"),
    TooLargeError: (413, "too_large", "body too large"),
}


def _refusal(name: str, error: WebhookError) -> Response:
    status, key, message = _STATUS.get(type(error), (400, "refused", "refused"))
    # Signature failures are logged without the body or headers: they are attacker-controlled.
    log(logger, logging.WARNING, f"webhook.{name}.{key}", reason=str(error))
    return JSONResponse({"error": message}, status_code=status)


def _answer(accepted: Accepted) -> Response:
    # Logged by the writer, one line per batch (resolver.ingress.batching).
    if accepted.kind == "created":
        body: dict[str, object] = {"job_id": accepted.job_id}
        if accepted.queued_behind:
            body["queued_behind"] = accepted.queued_behind
        return JSONResponse(body, status_code=202)
    if accepted.kind == "duplicate":
        return JSONResponse({"job_id": accepted.job_id, "duplicate": True})
    if accepted.kind == "unlinked":
        return JSONResponse({"notice": "unlinked"})
    return Response(status_code=204)
