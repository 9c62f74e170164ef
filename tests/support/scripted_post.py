"""The tests' own callback kind: a post that plays a script of answers, one per try."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from resolver.contract.callbacks import CallbackPayload, CallbackResult, Sending
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.core.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

KIND = "post_comment"


class ScriptedPost(CallbackPayload):
    kind: Literal["post_comment"] = KIND
    script: tuple[str, ...] = ()
    """One entry per try: "ok", a status code, or "429:<seconds>"."""
    calls: str = ""
    """The file each try appends its time to."""


def scripted_post(
    session: Session, sending: Sending[ScriptedPost], settings: Settings
) -> CallbackResult:
    """Plays the payload's script, one entry per try."""
    calls = Path(sending.payload.calls)
    with calls.open("a") as f:
        f.write(f"{time.monotonic()}\n")
    script = sending.payload.script
    step = script[min(len(calls.read_text().splitlines()), len(script)) - 1]
    if step == "ok":
        return CallbackResult(message={"comment_id": 7})
    status, _, after = step.partition(":")
    if int(status) >= 500 or int(status) == 429:
        raise TransientCallbackError(
            f"HTTP {status}", status=int(status), retry_after=float(after) if after else None
        )
    raise PermanentCallbackError(f"HTTP {status}", status=int(status))
