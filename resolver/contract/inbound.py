"""What every webhook integration shares: events, routes, triggers and their errors. Pure."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue, SecretStr, ValidationError
from pydantic_core import from_json

from resolver.contract.pulls import PullTrackers
from resolver.contract.triggers import DRAFT, ReviewRequest, TaskTrigger
from resolver.core.settings import Settings

Headers = Mapping[str, str]
"""Request headers with lower-cased names."""


class WebhookError(Exception):
    """A delivery we refuse; the subclass decides the HTTP status at the edge."""


class SignatureError(WebhookError):
    """Missing or bad signature, or a timestamp outside the replay window (401)."""


class MalformedError(WebhookError):
    """The body or a required header cannot be understood (400)."""


class TooLargeError(WebhookError):
    """The body is over the configured limit (413)."""


class VendorModel(BaseModel):
    """Base of vendor payload models: read only what we use, tolerate everything else."""

    model_config = ConfigDict(extra="ignore", frozen=True)


@dataclass(frozen=True)
class WebhookEvent:
    """A verified delivery: the vendor's event key, its idempotency key and its body.

    `payload` is the decoded body when parsing needed all of it. Without it, a route validates
    its model straight from the raw `body`, which builds only the fields the model reads: on a
    GitHub payload (mostly URLs nobody reads) that costs a sixth of decoding it all. A parser
    that leaves `payload` unset must have passed `body` through `check_storable`.
    """

    key: str
    delivery_key: str
    payload: Mapping[str, object] | None = None
    body: bytes = b""


@dataclass(frozen=True)
class Policy:
    """The settings a route handler may look at."""

    bot_name: str
    trigger_label: str
    allowed_bots: frozenset[str] = frozenset()
    bot_account_ids: frozenset[str] = frozenset()

    def is_bot_login(self, login: str | None) -> bool:
        """Whether `login` is our own bot account (`resolver`, `resolver[bot]`)."""
        name = (login or "").lower().removesuffix("[bot]")
        return name == self.bot_name.lower()

    def is_trigger_label(self, label: str | None) -> bool:
        return (label or "").strip().lower() == self.trigger_label.lower()


@dataclass(frozen=True)
class Sender:
    """Who caused the event, as the provider names them."""

    external_id: str
    login: str | None = None
    is_bot: bool = False


@dataclass(frozen=True)
class Trigger:
    """A request for the agent. `subject` is stored in the job's `trigger` column, with what
    intake adds (`triggers.Origin`)."""

    task: str
    sender: Sender
    conversation_key: str
    subject: TaskTrigger
    repo: str | None = None
    followup_only: bool = False
    """Only act if the conversation already has a job (Slack thread replies)."""
    once_key: str | None = None
    """Deliveries that share it make one job (the comments and the body of one review): it
    takes the place of the delivery id as the idempotency key."""
    ci_branch: str | None = None
    """A red check on this bot branch: it follows up the job that pushed the branch, as that
    job's requester (the sender is CI, not a person); nothing happens when no job did."""
    bot_branches: bool = False
    """A push to the default branch, for the bot's branches on it (`conflicts: fix`): it acts
    for the requester of the newest job on one of them (the pusher may be anyone); nothing
    happens when no job of ours has a branch there."""
    auto_review: bool = False
    """A pull request's own event for an auto-review: nothing is said (no 👀, no status, no
    notice to an unlinked author) until the worker has read the repository's opt-in."""


def auto_review(
    subject: ReviewRequest, author: Sender, conversation_key: str, task: str
) -> Trigger:
    """The trigger of an auto-review of `subject` at its head, for its `author`: the events
    that name one head (opened, marked ready, a redelivery) are one review, and a draft's is
    one of its own (skipped by default), so that marking it ready at that head still reviews
    it."""
    draft = DRAFT if subject.draft else ""
    return Trigger(
        task=task,
        sender=author,
        conversation_key=conversation_key,
        repo=subject.repo.full_name,
        subject=subject,
        once_key=f"auto-review:{conversation_key}@{subject.head_sha}{draft}",
        auto_review=True,
    )


@dataclass(frozen=True)
class Challenge:
    """A handshake to answer with 200 and the value (Slack url_verification)."""

    value: str


RouteResult = Trigger | Challenge | None
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Route(Generic[M]):
    """One routed event: the vendor model to validate against and the handler to call."""

    model: type[M]
    handler: Callable[[M, Policy], RouteResult]

    def run(self, event: WebhookEvent, policy: Policy) -> RouteResult:
        return self.handler(validated(self.model, event), policy)


def validated(model: type[M], event: WebhookEvent) -> M:
    """The event's payload as `model`, or MalformedError."""
    try:
        if event.payload is not None:
            return model.model_validate(event.payload)
        return model.model_validate_json(event.body)
    except ValidationError as error:
        raise MalformedError(f"payload does not fit {model.__name__}") from error


class Routed(Protocol):
    """A route of any vendor model (`Route`), as the dispatcher runs it."""

    def run(self, event: WebhookEvent, policy: Policy) -> RouteResult: ...


def route_event(routes: Mapping[str, Routed], event: WebhookEvent, policy: Policy) -> RouteResult:
    """Run the event's handler; events without a route (ignored or unknown) give None."""
    route = routes.get(event.key)
    return None if route is None else route.run(event, policy)


def ignored_sender(sender: Sender, policy: Policy) -> str | None:
    """Why a trigger from `sender` must not run: our own bot, or a bot not allow-listed."""
    if policy.is_bot_login(sender.login) or sender.external_id in policy.bot_account_ids:
        return "own"
    names = {(sender.login or "").lower(), (sender.login or "").lower().removesuffix("[bot]")}
    if sender.is_bot and not names & policy.allowed_bots:
        return "bot"
    return None


@dataclass(frozen=True)
class Integration:
    """The one object an integration exports: verify → parse → route (→ act → callback)."""

    name: str
    routes: Mapping[str, Routed]
    ignored: frozenset[str]
    enabled: Callable[[Settings], bool]
    verify: Callable[[Headers, bytes, Settings, float], None]
    parse: Callable[[Headers, bytes], WebhookEvent]
    pulls: PullTrackers = field(default_factory=dict)
    """Events that tell of the bot's own pull requests, each with its reader: intake keeps the
    record of them (`contract.pulls`), beside routing the event."""


def decode_object(body: bytes) -> dict[str, JsonValue]:
    """The body as a JSON object, or MalformedError. UTF-8 only, as every provider sends; an
    escaped lone surrogate is refused as invalid JSON (no database column could store it)."""
    check_storable(body)
    try:
        data = from_json(body, allow_inf_nan=False)
    except ValueError as error:
        raise MalformedError("body is not JSON") from error
    if not isinstance(data, dict):
        raise MalformedError("body is not a JSON object")
    return data


def check_storable(body: bytes) -> None:
    """Refuse a body whose JSON escapes a NUL, which valid JSON may do and no text column
    stores. Text about such an escape (`\\\\u0000` in the JSON: a backslash, then `u0000`)
    is no NUL, and is kept."""
    if b"\\u0000" in body and _ESCAPED_NUL.search(body):
        raise MalformedError("body has characters that cannot be stored")


# `\u0000` after an even number of backslashes (those escape each other, not the `u`).
_ESCAPED_NUL: Final = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def content_key(*parts: object) -> str:
    """A stable idempotency key from parts of a payload, for senders without a delivery id."""
    text = "\x1f".join("" if part is None else str(part) for part in parts)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def text_field(value: object) -> str | None:
    """A string field of a loosely typed payload, or None."""
    return value if isinstance(value, str) else None


def secret_value(secret: SecretStr | None) -> str | None:
    """A configured secret, or None when unset or empty (the provider is then off)."""
    value = secret.get_secret_value() if secret is not None else ""
    return value or None
