"""Sixth's reply side: a thread of a channel. The "Sixth API" of these tests is a JSON-lines
file (`RESOLVER_SIXTH_OUTBOX`), so that a post made by a Celery worker process is seen by the
test that started it: each post, edit and reaction is one line appended to it."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import TAG, History
from resolver.contract.triggers import TaskTrigger
from resolver.core.settings import Settings

OUTBOX_ENV: Final = "RESOLVER_SIXTH_OUTBOX"


def outbox() -> Path:
    """Where Sixth's API writes, or a permanent error (as a missing token would be)."""
    path = os.environ.get(OUTBOX_ENV)
    if not path:
        raise PermanentCallbackError(f"{OUTBOX_ENV} is not set")
    return Path(path)


def records(path: Path) -> list[dict[str, Any]]:
    """Every line the API wrote, oldest first."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _append(record: Mapping[str, Any]) -> None:
    # One write of one line in append mode: lines of concurrent writers never interleave.
    with outbox().open("a") as file:
        file.write(json.dumps(record) + "\n")


class SixthThread:
    """The thread a trigger came from: `Conversation` (resolver.contract.outbound)."""

    def __init__(self, channel: str, thread: str, message_id: str | None) -> None:
        self.channel, self.thread, self.message_id = channel, thread, message_id

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        if tag is not None and TAG.fullmatch(tag) is None:
            raise ValueError(f"not a message tag: {tag!r}")
        ref = {"channel": self.channel, "thread": self.thread, "id": uuid.uuid4().hex}
        at = datetime.now(UTC).isoformat()
        _append({"op": "post", **ref, "text": text, "tag": tag, "at": at})
        return ref

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        since = since if since.tzinfo else since.replace(tzinfo=UTC)
        for record in reversed(records(outbox())):
            if (
                record["op"] == "post"
                and record["tag"] == tag
                and (record["channel"], record["thread"]) == (self.channel, self.thread)
                and datetime.fromisoformat(record["at"]) >= since
            ):
                return {"channel": self.channel, "thread": self.thread, "id": record["id"]}
        return None

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        _append({"op": "edit", "id": ref["id"], "text": text})

    def acknowledge(self) -> None:
        if self.message_id is not None:
            _append({"op": "react", "id": self.message_id, "emoji": "eyes"})

    def history(self) -> History:
        return History()


def conversation_for(
    trigger: TaskTrigger, _requester_id: int | None, _settings: Settings
) -> SixthThread:
    context = trigger.part
    channel, thread = context.get("channel"), context.get("thread")
    if not isinstance(channel, str) or not isinstance(thread, str):
        raise PermanentCallbackError("the trigger names no Sixth channel and thread")
    message_id = context.get("message_id")
    return SixthThread(channel, thread, message_id if isinstance(message_id, str) else None)
