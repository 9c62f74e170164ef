"""`@bot run <schedule>` in a forge's conversation, without a stack: the Sixth test provider
installed as a forge whose write permissions are a set. Someone who may push starts the run and
is told so; anyone else is refused by name; a forge that cannot answer is named in the reply."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from sqlalchemy import select

from integrations import registry
from resolver.contract import outbound as providers
from resolver.contract.errors import TransientCallbackError
from resolver.contract.triggers import read_trigger
from resolver.core.job import RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.schedules.commands import names_a_schedule, run
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Callback, Job
from resolver.worker.values import Snapshot
from tests.conftest import ResolverEnv
from tests.integrations.sixth.provider import NAME, PROVIDER
from tests.schedules.helpers import make_schedule

REPO = "octo/widgets"


@dataclass
class Permissions:
    """The forge's answer to `can_write`: who may push; `down` makes it fail."""

    writers: set[str] = field(default_factory=set)
    down: bool = False

    def can_write(self, full_name: str, user: providers.ForgeUser) -> bool:
        if self.down:
            raise TransientCallbackError("HTTP 503", status=503)
        return full_name == REPO and user.external_id in self.writers


@pytest.fixture
def forge(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> Permissions:
    permissions = Permissions({"U1"})
    provider = replace(PROVIDER, forge=lambda context, requester_id, settings: permissions)  # type: ignore[arg-type,return-value]
    monkeypatch.setattr(registry, "INSTALLED", (*registry.INSTALLED, provider))
    make_schedule("weekly-deps", f"{NAME}:{REPO}")
    return permissions


def asked(task: str, sender: str = "U1", login: str = "ada") -> Snapshot:
    trigger: dict[str, Any] = {
        "repo": REPO,
        "channel": "C0DEV",
        "thread": "1.0",
        "sender": {"id": sender, "login": login},
    }
    with session_scope() as session:
        job = jobs.create_job(session, jobs.NewJob(source=NAME, task=task, trigger=trigger))
        job_id = job.id
    return Snapshot(job_id, NAME, task, REPO, login, None, read_trigger(trigger), None, None)


def names_one(snapshot: Snapshot) -> bool:
    with session_scope() as session:
        return names_a_schedule(session, snapshot)


def answered(snapshot: Snapshot) -> RunResult:
    """`@bot run` in a session of its own, as the worker runs a command."""
    with session_scope() as session:
        return run(session, snapshot, get_settings())


def reply_to(snapshot: Snapshot) -> str:
    with session_scope() as session:
        [callback] = session.scalars(select(Callback).where(Callback.job_id == snapshot.id))
        return str(callback.payload["text"])


def schedule_jobs() -> list[int]:
    with session_scope() as session:
        return list(session.scalars(select(Job.id).where(Job.source == "schedule")))


def test_run_names_a_schedule_of_the_repository_only(forge: Permissions) -> None:
    assert names_one(asked("run weekly-deps"))
    assert not names_one(asked("run nightly"))
    assert not names_one(asked("run the tests and fix what fails"))


def test_someone_who_may_push_starts_the_run_and_is_told_its_job(forge: Permissions) -> None:
    snapshot = asked("run weekly-deps")
    result = answered(snapshot)
    assert (result.state, result.outcome) == (JobState.SUCCEEDED, Outcome.ANSWERED)
    assert result.result == {"command": "run"}
    [job_id] = schedule_jobs()
    assert reply_to(snapshot).startswith(f"Started a run of schedule `weekly-deps` ([job {job_id}]")


def test_someone_who_may_not_push_is_refused_and_nothing_runs(forge: Permissions) -> None:
    snapshot = asked("run weekly-deps", sender="U2", login="bo")
    answered(snapshot)
    assert reply_to(snapshot) == (
        f"Sorry @bo, I only take requests from people who can push to `{REPO}`. "
        "Ask a maintainer to mention me, or to give you write access."
    )
    assert schedule_jobs() == []


def test_a_forge_that_cannot_answer_is_named_and_nothing_runs(forge: Permissions) -> None:
    forge.down = True
    snapshot = asked("run weekly-deps")
    answered(snapshot)
    assert reply_to(snapshot) == (
        "I could not reach the forge to check who may run schedules: HTTP 503"
    )
    assert schedule_jobs() == []
