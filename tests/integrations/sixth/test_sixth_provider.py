"""A sixth provider costs one folder and one line in `integrations/registry.py`.

The provider lives in this test package (`provider/`: its own verify, parse, route and
conversation) and is installed the way its registry line would install it. Nothing else in
Resolver is told its name, yet a signed delivery to `/webhooks/sixth` becomes a job, the job
runs, and its reply is posted in the Sixth thread, by the test process and by a real worker.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from starlette.routing import Route
from starlette.testclient import TestClient

from integrations import registry
from resolver.callbacks.send import send
from resolver.cli.doctor import _providers
from resolver.contract.triggers import read_trigger
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.ingress.notices import render_unlinked
from resolver.runners import run_request, runner_for
from resolver.store.db import session_scope
from resolver.store.models import Callback, Job
from resolver.worker.execute import execute
from tests.integrations.conftest import Store
from tests.integrations.deliveries import BOT
from tests.integrations.sixth.provider import PROVIDER, SECRET_ENV
from tests.integrations.sixth.provider.conversation import OUTBOX_ENV, records
from tests.integrations.sixth.provider.settings import SixthSettings

SECRET = "sixth-test-signing-secret"
SENDER = "U0SIXTH"
CHANNEL = "C0DEV"
NO_JOB_YET = "There is no job of mine in this conversation."
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def sixth(monkeypatch: pytest.MonkeyPatch, webhook_env: dict[str, str], tmp_path: Path) -> Path:
    """The sixth provider installed (what its registry line does) and configured: its signing
    secret, and the outbox its API writes to (returned)."""
    monkeypatch.setattr(registry, "INSTALLED", (*registry.INSTALLED, PROVIDER))
    monkeypatch.setenv(SECRET_ENV, SECRET)
    outbox = tmp_path / "sixth-outbox.jsonl"
    monkeypatch.setenv(OUTBOX_ENV, str(outbox))
    get_settings.cache_clear()
    return outbox


@pytest.fixture
def sixth_client(sixth: Path) -> Iterator[TestClient]:
    """The real app, built after the sixth provider was installed."""
    from resolver.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client


def message(
    text: str, *, thread: str | None = None, author: str = SENDER, handle: str | None = "ada"
) -> dict[str, Any]:
    return {
        "type": "message.created",
        "workspace": "W0ACME",
        "message": {
            "id": f"M{uuid.uuid4().hex[:10]}",
            "channel": CHANNEL,
            "thread": thread,
            "text": text,
            "author": {"id": author, "handle": handle},
        },
    }


def signed(
    payload: dict[str, Any], secret: str = SECRET, at: float | None = None
) -> tuple[bytes, dict[str, str]]:
    """A delivery signed as Sixth signs it, computed here independently of the code under test."""
    body = json.dumps(payload).encode()
    stamp = str(int(time.time() if at is None else at))
    digest = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    headers = {
        "content-type": "application/json",
        "x-sixth-delivery": uuid.uuid4().hex,
        "x-sixth-timestamp": stamp,
        "x-sixth-signature": f"sha256={digest}",
    }
    return body, headers


def deliver(client: TestClient, payload: dict[str, Any], **signing: Any) -> Any:
    body, headers = signed(payload, **signing)
    return client.post("/webhooks/sixth", content=body, headers=headers)


def callbacks(job_id: int | None = None) -> list[Callback]:
    with session_scope() as session:
        query = select(Callback).order_by(Callback.id)
        if job_id is not None:
            query = query.where(Callback.job_id == job_id)
        return list(session.scalars(query))


def job(job_id: int) -> Job:
    with session_scope() as session:
        found = session.get(Job, job_id)
        assert found is not None
        return found


def posts(outbox: Path) -> list[dict[str, Any]]:
    return [record for record in records(outbox) if record["op"] == "post"]


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def worker(sixth: Path, tmp_path: Path) -> Iterator[Path]:
    """A Celery worker process of the app in worker_app.py, in its own process group; yields
    its log."""
    log = tmp_path / "worker.log"
    command = [
        *(sys.executable, "-m", "celery", "-A", "tests.integrations.sixth.worker_app", "worker"),
        *("-Q", "jobs,callbacks,default", "-c", "1", "-n", "sixth@%h"),
        *("--without-mingle", "--without-gossip", "--loglevel", "INFO"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    yield log
    with contextlib.suppress(ProcessLookupError):  # it may have died by itself
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_one_registry_entry_is_all_resolver_needs_to_know(sixth: Path) -> None:
    """Routes, runners, doctor, default repositories and notices all find it by the registry."""
    from resolver.app import create_app

    assert registry.names()[-1] == "sixth" and registry.get("sixth") is PROVIDER
    paths = [route.path for route in create_app().routes if isinstance(route, Route)]
    assert "/webhooks/sixth" in paths
    assert runner_for("sixth") is run_request
    # Its settings class is composed into the service's, read from the same environment.
    secret = SixthSettings.of(get_settings()).signing_secret
    assert secret is not None and secret.get_secret_value() == SECRET
    assert "RESOLVER_SIXTH_SIGNING_SECRET" in {
        SixthSettings.variable(f) for f in SixthSettings.model_fields
    }
    # Doctor asks the provider itself whether its webhook is on.
    checks = {check.name: check for check in _providers(get_settings())}
    assert checks["provider sixth"].status == "ok"
    assert "sixth" in registry.routed_names()
    assert registry.check_route("sixth", "octo/widgets") == ("github", "octo/widgets")
    assert "Sixth account" in render_unlinked("sixth", SENDER, "ada", get_settings()).body
    assert "--provider sixth" in render_unlinked("sixth", SENDER, "ada", get_settings()).body


def test_a_signed_delivery_becomes_a_job_and_a_bad_signature_nothing(
    sixth_client: TestClient, store: Store
) -> None:
    store.link("sixth", SENDER, "ada")
    request = message(f"@{BOT} status")
    assert deliver(sixth_client, request, secret="not-the-secret").status_code == 401
    stale = deliver(sixth_client, request, at=time.time() - 3600)
    assert stale.status_code == 401
    body, headers = signed(request)
    unsigned = {k: v for k, v in headers.items() if k != "x-sixth-signature"}
    assert sixth_client.post("/webhooks/sixth", content=body, headers=unsigned).status_code == 401
    assert store.jobs() == [] and store.deliveries() == []

    accepted = sixth_client.post("/webhooks/sixth", content=body, headers=headers)
    assert accepted.status_code == 202, accepted.text
    [created] = store.jobs()
    assert accepted.json() == {"job_id": created.id}
    assert (created.source, created.task, created.state) == ("sixth", "status", JobState.QUEUED)
    assert created.requester == "ada" and created.requester_id is not None
    thread = request["message"]["id"]
    assert created.conversation_key == f"sixth:W0ACME:{CHANNEL}:{thread}"
    assert read_trigger(created.trigger).origin.provider == "sixth"
    part = read_trigger(created.trigger).part
    assert (part["channel"], part["thread"]) == (CHANNEL, thread)
    [delivery] = store.deliveries()
    assert (delivery.provider, delivery.event, delivery.job_id) == (
        "sixth",
        "message.created",
        created.id,
    )

    again = sixth_client.post("/webhooks/sixth", content=body, headers=headers)
    assert again.json() == {"job_id": created.id, "duplicate": True}
    assert deliver(sixth_client, message("no mention here")).status_code == 204
    assert deliver(sixth_client, {**message("x"), "type": "reaction.added"}).status_code == 204
    assert len(store.jobs()) == 1


def test_the_job_runs_and_its_reply_is_posted_in_the_sixth_thread(
    sixth_client: TestClient, store: Store, sixth: Path
) -> None:
    """Run and delivered in this process, as the worker's task bodies do it."""
    store.link("sixth", SENDER, "ada")
    request = message(f"@{BOT} status", thread="M0PARENT")
    job_id = deliver(sixth_client, request).json()["job_id"]

    execute(job_id, runner_for, get_settings())
    done = job(job_id)
    assert (done.state, done.outcome) == (JobState.SUCCEEDED, Outcome.ANSWERED)
    # The intake acknowledged the command with 👀 (sent in its turn); the job answers it.
    [seen, reply] = callbacks(job_id)
    assert (seen.action, reply.action) == ("react", "reply")
    assert (reply.provider, reply.state) == ("sixth", "pending")
    assert send(reply.id, get_settings()) is None
    [sent] = [c for c in callbacks(job_id) if c.action == "reply"]
    assert sent.state == "sent"

    [post] = posts(sixth)
    assert (post["channel"], post["thread"], post["text"]) == (CHANNEL, "M0PARENT", NO_JOB_YET)
    assert post["tag"] == f"reply-{reply.id}" and sent.result["message"]["id"] == post["id"]
    assert send(reply.id, get_settings()) is None  # sent already: never posted twice
    assert len(posts(sixth)) == 1


def test_an_unlinked_sender_is_answered_in_the_sixth_thread(
    sixth_client: TestClient, store: Store, sixth: Path
) -> None:
    # With a handle: unknown by id, the sender is looked up by login too, and is still unknown.
    request = message(f"@{BOT} fix the build", author="U0STRANGER", handle="stranger")
    answer = deliver(sixth_client, request)
    assert answer.status_code == 200 and answer.json() == {"notice": "unlinked"}
    assert store.jobs() == []
    [notice] = callbacks()
    assert (notice.provider, notice.action) == ("sixth", "notice")
    assert send(notice.id, get_settings()) is None
    [post] = posts(sixth)
    assert "Sixth account" in post["text"] and "--provider sixth" in post["text"]
    assert "--external-id U0STRANGER" in post["text"] and post["tag"] == f"notice-{notice.id}"


def test_a_celery_worker_runs_the_sixth_job_and_posts_its_reply(
    sixth_client: TestClient, store: Store, sixth: Path, worker: Path
) -> None:
    """A real worker process, whose registry lists the sixth provider (worker_app.py)."""
    store.link("sixth", SENDER, "ada")
    job_id = deliver(sixth_client, message(f"@{BOT} status")).json()["job_id"]
    wait_until(lambda: len(posts(sixth)) == 1, 60, f"the reply (worker log: {worker})")
    sent = lambda: [c.state for c in callbacks(job_id)] == ["sent", "sent"]  # noqa: E731
    wait_until(sent, 30, "the 👀 and the reply to be sent")
    assert job(job_id).state == JobState.SUCCEEDED
    [post] = posts(sixth)
    assert (post["channel"], post["text"]) == (CHANNEL, NO_JOB_YET)
