"""A Celery app for worker tests: Resolver's own app plus two runners that only tests install."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from resolver import runners, tasks
from resolver.callbacks.send import ACTIONS, Action
from resolver.core.job import JobContext, RunResult
from resolver.core.logs import log
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store.db import end_step
from resolver.store.jobs import get_job
from resolver.store.models import Credential
from resolver.store.vault import Vault
from tests.support.scripted_post import KIND, ScriptedPost, scripted_post

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
app = tasks.app  # the Celery root's app: it says where the settings are
ACTIONS[KIND] = Action(ScriptedPost, scripted_post)
