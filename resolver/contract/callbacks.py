"""What a callback row asks to send: one frozen, typed payload per kind of callback, stored in
the row's `payload` column as JSON with its `kind` (the row's `action`) and its `v`. Pure.

The fields keep the names the rows had before these types, so a row of the older shape (no
`kind`, no `v`: written before migration 0018, or by a worker of the previous release during
a rolling deploy) still reads, and a worker of the previous release still reads a new row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from resolver.contract.outbound import (
    NOTICE,
    OPEN_PULL,
    REACT,
    REPLY,
    STATUS,
    THREAD_REPLY,
    UPDATE_PULL,
)
from resolver.contract.review import POST_REVIEW, DiffComment, Verdict
from resolver.contract.stored import faults_of
from resolver.contract.triggers import JsonObject

CALLBACK_VERSION: Final = 1


class CallbackPayloadError(ValueError):
    """A stored payload that does not read as its callback's kind. The message names the
    fields at fault, never their values (a reply's text is a person's words)."""


class CallbackPayload(BaseModel):
    """What every payload has: its kind (each kind names its own) and its version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    v: Literal[1] = CALLBACK_VERSION


class StatusUpdate(CallbackPayload):
    """Bring the job's status message up to date (it is rendered from the job row)."""

    kind: Literal["status"] = STATUS
    job_id: int


class Reaction(CallbackPayload):
    """👀 on the message that asked for the job."""

    kind: Literal["react"] = REACT
    job_id: int


class Reply(CallbackPayload):
    """A plain reply in the job's conversation."""

    kind: Literal["reply"] = REPLY
    job_id: int
    text: str


class NoticePost(CallbackPayload):
    """Post a notice (its text and where it goes are on the notice's row)."""

    kind: Literal["notice"] = NOTICE
    notice_id: int


class PullToOpen(CallbackPayload):
    """Open the job's draft pull request, unless one from its branch is open."""

    kind: Literal["open_pull"] = OPEN_PULL
    job_id: int


class PullToUpdate(CallbackPayload):
    """Rewrite the description of the pull request a follow-up pushed to."""

    kind: Literal["update_pull"] = UPDATE_PULL
    job_id: int


class ThreadReply(CallbackPayload):
    """A reply in one review thread, and that thread resolved when `resolve` says so."""

    kind: Literal["thread_reply"] = THREAD_REPLY
    job_id: int
    where: JsonObject = Field(default_factory=dict)
    """The provider's own entries for the thread (`ReviewThread.where`): only it reads them."""
    text: str
    resolve: bool = False


class ReviewContent(BaseModel):
    """The review to post, its texts already sanitised. A review kept on a job's result says
    more (where each comment sits in the diff): the callback needs none of it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    summary: str
    verdict: Verdict
    comments: tuple[DiffComment, ...] = ()
    head_sha: str = ""
    base_sha: str = ""
    start_sha: str = ""


class ReviewToPost(CallbackPayload):
    """A review job's review, posted as one review of its pull request."""

    kind: Literal["post_review"] = POST_REVIEW
    job_id: int
    review: ReviewContent


P = TypeVar("P", bound=CallbackPayload)


def kind_of(model: type[CallbackPayload]) -> str:
    """The `kind` a payload model stores (the `action` of its callback rows)."""
    return str(model.model_fields["kind"].default)


PAYLOADS: Final[dict[str, type[CallbackPayload]]] = {
    kind_of(model): model
    for model in (
        StatusUpdate,
        Reaction,
        Reply,
        NoticePost,
        PullToOpen,
        PullToUpdate,
        ThreadReply,
        ReviewToPost,
    )
}
"""Resolver's own callback kinds, by kind (the migration reads rows through it)."""


@dataclass(frozen=True)
class Sending(Generic[P]):
    """One try of a callback, as its action gets it: the row's id (the tag of what it posts),
    the provider it goes through, and its payload."""

    callback_id: int
    provider: str
    payload: P


def dump_payload(payload: CallbackPayload) -> JsonObject:
    """The JSON a callback row's `payload` column stores: the fields, `kind` and `v`."""
    return payload.model_dump(mode="json")


def read_payload(model: type[P], data: object) -> P:
    """A stored payload as `model`'s typed value; a payload of the older shape (no `kind` and
    `v`) is read from the fields `model` has, and whatever else it held is dropped."""
    kind = kind_of(model)
    if not isinstance(data, Mapping):
        raise CallbackPayloadError(f"a {kind} callback's payload is not an object")
    if "kind" in data and "v" in data:
        if data["kind"] != kind:
            raise CallbackPayloadError(f"a {kind} callback holds a {data['kind']!s:.40} payload")
        fields = dict(data)
    else:
        fields = {k: data[k] for k in model.model_fields if k in data} | {"kind": kind}
    try:
        return model.model_validate(fields)
    except ValidationError as error:
        # Not chained: pydantic's own message quotes the values.
        fault = f"a {kind} callback's payload does not read: {faults_of(error)}"
        raise CallbackPayloadError(fault) from None


class CallbackResultError(ValueError):
    """A callback row's stored result that does not read; it names the fields, never values."""


class CallbackResult(BaseModel):
    """What a callback's row records in its `result` column, with its `v`: while it is pending,
    when a try began to post (a later try then looks for that post before making another);
    once sent, what the provider answered. One shape serves every kind (the row's `action`):
    an answer is a message, a pull request, a review, or that nothing was to be done."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    v: Literal[1] = CALLBACK_VERSION
    posting: datetime | None = None
    message: JsonObject | None = None
    """The provider's reference to the message posted or edited."""
    review: JsonObject | None = None
    url: str | None = None
    number: int | None = None
    """The pull request opened or updated."""
    resolved: bool = False
    """The review thread replied to was resolved."""
    unchanged: bool = False
    """The status message already said this."""
    skipped: bool = False
    """Nothing was left to do (sent already, or its pull request gone)."""


def dump_callback_result(result: CallbackResult) -> JsonObject:
    """The JSON a callback row's `result` column stores: what was set, and `v`."""
    return {"v": result.v} | result.model_dump(mode="json", exclude_defaults=True)


def read_callback_result(data: object) -> CallbackResult:
    """A stored result as its typed value. One of the older shape (no `v`: sent before these
    types, perhaps by an older release's provider code) is read from the fields it shares with
    `CallbackResult`; whatever else it held stays on the row, unread as before."""
    if data is None:
        return CallbackResult()
    if not isinstance(data, Mapping):
        raise CallbackResultError("a callback's result is not an object")
    fields = (
        dict(data)
        if "v" in data
        else {k: data[k] for k in CallbackResult.model_fields if k in data}
    )
    try:
        return CallbackResult.model_validate(fields)
    except ValidationError as error:
        # Not chained: pydantic's own message quotes the values.
        raise CallbackResultError(
            f"a callback's result does not read: {faults_of(error)}"
        ) from None
