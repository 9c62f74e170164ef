"""A Celery app for worker tests: Resolver's own app plus two runners that only tests install."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from resolver import runners
from resolver.broker.celery_app import get_celery
from resolver.callbacks.send import ACTIONS
from resolver.contract.errors import PermanentCallbackError, TransientCallbackError
from resolver.core.job import JobContext, RunResult
from resolver.core.logs import log
from resolver.core.settings import Settings, get_settings
from resolver.core.states import JobState, Outcome
from resolver.store.db import end_step
from resolver.store.jobs import get_job
from resolver.store.models import Credential
from resolver.store.vault import Vault

logger = logging.getLogger("tests.worker_app")


def sleepy(session: Session, ctx: JobContext) -> RunResult:
    """Sleeps, then appends a line to a marker file: one line per completed run."""
    trigger = get_job(session, ctx.job_id).trigger
    end_step(session)
    marker = Path(trigger["marker"])
    with marker.with_suffix(".started").open("a") as f:
        f.write(f"started {ctx.job_id}\n")
    deadline = time.monotonic() + float(trigger["seconds"])
    gate = Path(trigger["gate"]) if trigger.get("gate") else None
    # Sleeps its time, or until the test opens the gate when one is given.
    while time.monotonic() < deadline and not ctx.cancelled.is_set():
        if gate is not None and gate.exists():
            break
        time.sleep(0.05)
    with marker.open("a") as f:
        f.write(f"done {ctx.job_id}\n")
    return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED)


def careless(session: Session, ctx: JobContext) -> RunResult:
    """Uses the requester's stored token and then mishandles it in every way a bug could."""
    job = get_job(session, ctx.job_id)
    cred = session.scalars(select(Credential).where(Credential.user_id == job.requester_id)).one()
    token = Vault(get_settings().fernet_keys).decrypt(cred.ciphertext)
    log(logger, logging.WARNING, "test.careless", token=token.reveal(), wrapped=token)
    logger.error("formatted %s", token.reveal())
    raise RuntimeError(f"failed while using {token.reveal()}")


# The tests' own runners and callback action, added to the literal tables.
runners.RUNNERS["test-sleep"] = sleepy
runners.RUNNERS["test-careless"] = careless
app = get_celery()


def scripted_post(
    session: Session, provider: str, payload: Mapping[str, object], settings: Settings
) -> dict[str, object]:
    """Plays `payload["script"]`, one entry per try: "ok", a status code, or "429:<seconds>"."""
    calls = Path(str(payload["calls"]))
    with calls.open("a") as f:
        f.write(f"{time.monotonic()}\n")
    script = list(payload["script"])  # type: ignore[call-overload]
    step = str(script[min(len(calls.read_text().splitlines()), len(script)) - 1])
    if step == "ok":
        return {"comment_id": 7}
    status, _, after = step.partition(":")
    if int(status) >= 500 or int(status) == 429:
        raise TransientCallbackError(
            f"HTTP {status}", status=int(status), retry_after=float(after) if after else None
        )
    raise PermanentCallbackError(f"HTTP {status}", status=int(status))


ACTIONS["post_comment"] = scripted_post
