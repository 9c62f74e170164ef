"""Where a notice goes, and what it keeps beside that: the `context` column of a notice row.
Pure.

It is stored flat, as its trigger's JSON (with the trigger's `kind` and `v`) and the notice's
own two entries beside it: `request` (what an unlinked sender asked, to run once they link)
and `private` (the part only its recipient sees, dropped once sent). Every row written since
migration 0016 has this shape, and a row written before it still reads (`read_trigger`
converts the older flat trigger), so no row needs rewriting.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from resolver.contract.stored import faults_of
from resolver.contract.triggers import (
    JsonObject,
    TaskTrigger,
    TriggerError,
    dump_trigger,
    read_trigger,
)

REQUEST = "request"
PRIVATE = "private"


class NoticeContextError(ValueError):
    """A notice's stored context that does not read. The message names the fields at fault,
    never their values (a private part holds a sign-in link)."""


class _Own(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class NoticeRequest(_Own):
    """What an unlinked sender asked: run as their job once they have linked their account."""

    task: str
    repo: str | None = None


class PrivatePart(_Own):
    """What only the notice's recipient sees (their link), and the public text to post when
    the provider refuses a private message for good."""

    to: str
    text: str
    fallback: str | None = None


class NoticeContext(BaseModel):
    """A notice's context as the callbacks and the web app read it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trigger: TaskTrigger
    request: NoticeRequest | None = None
    private: PrivatePart | None = None


def dump_notice_context(context: NoticeContext) -> JsonObject:
    """The JSON a notice's `context` column stores: its trigger's, with its own entries."""
    data = dump_trigger(context.trigger)
    if context.request is not None:
        data[REQUEST] = context.request.model_dump(mode="json")
    if context.private is not None:
        data[PRIVATE] = context.private.model_dump(mode="json")
    return data


def read_notice_context(data: object) -> NoticeContext:
    """A stored context as its typed value. A request without a task is no request (as it
    was read before these types)."""
    if not isinstance(data, Mapping):
        raise NoticeContextError("a notice's context is not an object")
    try:
        trigger = read_trigger(data)
    except TriggerError as error:
        raise NoticeContextError(f"a notice's context: {error}") from None
    asked = data.get(REQUEST)
    if isinstance(asked, Mapping) and not asked.get("task"):
        asked = None
    own = {"trigger": trigger, REQUEST: asked, PRIVATE: data.get(PRIVATE)}
    try:
        return NoticeContext.model_validate(own)
    except ValidationError as error:
        # Not chained: pydantic's own message quotes the values.
        raise NoticeContextError(f"a notice's context does not read: {faults_of(error)}") from None
