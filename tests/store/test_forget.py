"""`resolver users forget NAME`: the person's running job stops first; then no copy of their
token or their request text is left in the database (its file and log, on SQLite; a full dump,
on PostgreSQL) nor in the command's output, and their jobs stay with their costs."""

import os
import subprocess
import threading
import time
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from resolver.core.states import JobState, Outcome
from resolver.store import accounts, jobs, web_sessions
from resolver.store.db import engine_for, session_scope
from resolver.store.models import (
    Credential,
    Identity,
    Job,
    JobEvent,
    SteeringMessage,
    User,
    WebSession,
)
from resolver.store.vault import Vault, store_credential
from tests.cli.test_cli_api import cli

TOKEN = "ghp_forgetme0123456789abcdefABCDEF"
TEXT = "please rename the grumpy-walrus-7731 helper"


def _stored(resolver_env) -> bytes:
    url = resolver_env.database_url
    if url.startswith("sqlite"):
        path = make_url(url).database
        return b"".join(
            open(p, "rb").read() for p in (path, f"{path}-wal") if p and os.path.exists(p)
        )
    parts = make_url(url)
    env = {**os.environ, "PGPASSWORD": parts.password or ""}
    plain = ["-h", str(parts.host), "-p", str(parts.port), "-U", str(parts.username)]
    return subprocess.run(
        ["pg_dump", *plain, str(parts.database)], env=env, capture_output=True, check=True
    ).stdout


def _worker(job_id: int, stop: threading.Event) -> None:
    """A worker's side of a running job: it ends the job when asked to stop."""
    while not stop.is_set():
        with session_scope() as session:
            job = jobs.get_job(session, job_id)
            if job.cancel_requested:
                jobs.finish_job(session, job, JobState.CANCELLED, Outcome.CANCELLED)
                return
        time.sleep(0.2)


def test_forget_leaves_no_token_or_text_and_keeps_the_jobs(resolver_env, backend) -> None:
    vault = Vault([resolver_env.vars["RESOLVER_SECRET_KEYS"]])
    with session_scope() as session:
        ada = accounts.add_user(session, "ada")
        accounts.add_user(session, "bob")
        accounts.link_identity(session, "ada", "github", "583231", "ada-l")
        store_credential(
            session, vault, provider="github", kind="oauth", secret=TOKEN, user_id=ada.id
        )
        web_sessions.open_session(session, "github", "583231", datetime.now(UTC))
        new = jobs.NewJob(
            source="github",
            task=TEXT,
            repo="o/r",
            requester="ada-l",
            requester_id=ada.id,
            trigger={"sender": "ada-l", "url": "https://forge.example/o/r/issues/1"},
        )
        done = jobs.create_job(session, new)
        done.state, done.outcome, done.cost_usd = "succeeded", "changed_code", 0.42
        done.pr_url = "https://forge.example/o/r/pull/2"
        session.flush()
        session.add(JobEvent(job_id=done.id, seq=1, kind="prompt", payload={"text": TEXT}))
        running = jobs.create_job(session, new)
        running.state = "running"
        session.flush()
        session.add(
            SteeringMessage(job_id=running.id, from_job_id=done.id, author="ada-l", text=TEXT)
        )
        others = jobs.create_job(session, jobs.NewJob(source="github", task="bob's", repo="o/r"))
        ids = (done.id, running.id, others.id)
    assert TEXT.encode() in _stored(resolver_env)

    stop = threading.Event()
    worker = threading.Thread(target=_worker, args=(ids[1], stop))
    worker.start()
    try:
        debug = resolver_env.child_env(RESOLVER_LOG_LEVEL="DEBUG")
        forgot = cli(debug, "users", "forget", "ada", "--wait", "30")
    finally:
        stop.set()
        worker.join()
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    said = " ".join(forgot.stdout.split())
    assert "forgot ada: 1 linked account(s), 1 token(s), 1 web session(s); 2 job(s)" in said
    for output in (forgot.stdout, forgot.stderr):  # the command's own logs go to stderr
        assert TOKEN not in output and TEXT not in output

    engine_for(resolver_env.database_url).dispose()
    stored = _stored(resolver_env)
    assert TEXT.encode() not in stored, "the request text is gone from the database's bytes"
    assert TOKEN.encode() not in stored
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(Identity)) == 0
        assert session.scalar(select(func.count()).select_from(Credential)) == 0
        assert session.scalar(select(func.count()).select_from(WebSession)) == 0
        assert session.scalars(select(User.name)).all() == ["bob"]
        kept = session.get(Job, ids[0])
        assert kept is not None
        assert (kept.task, kept.requester, kept.cost_usd, kept.pr_url) == (
            "removed",
            "removed",
            0.42,
            "https://forge.example/o/r/pull/2",
        )
        assert kept.trigger["url"] == "https://forge.example/o/r/issues/1"
        events = session.scalars(select(JobEvent.kind).where(JobEvent.job_id == ids[0])).all()
        assert events == ["removed"]
        assert session.get(Job, ids[1]).state == "cancelled", "the running job stopped first"
        assert session.get(Job, ids[2]).task == "bob's", "nobody else's"

    again = cli(resolver_env.child_env(), "users", "forget", "ada")
    assert again.returncode == 1 and "no user named 'ada'" in again.stdout
