"""Who may steer a running job (worker/steering.py `steer`), without a worker: the job's own
requester, or anyone who may push to its repository; anyone else is refused by name, and a
forge that cannot answer is named. Commands and requests with no running job are not
steering. The forge is the Sixth test provider installed with a set of writers."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from integrations import registry
from resolver.contract import outbound as providers
from resolver.contract.errors import TransientCallbackError
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.accounts import add_user
from resolver.store.db import session_scope
from resolver.store.models import SteeringMessage
from resolver.worker.steering import steer
from tests.conftest import ResolverEnv
from tests.integrations.sixth.provider import NAME, PROVIDER

REPO = "octo/widgets"
CONVERSATION = f"{NAME}:C0DEV:1.0"


@dataclass
class Writers:
    ids: set[str] = field(default_factory=set)
    down: bool = False

    def can_write(self, full_name: str, user: providers.ForgeUser) -> bool:
        if self.down:
            raise TransientCallbackError("HTTP 503", status=503)
        return full_name == REPO and user.external_id in self.ids


@pytest.fixture
def writers(resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch) -> Writers:
    found = Writers({"U-carol"})
    provider = replace(PROVIDER, forge=lambda context, requester_id, settings: found)  # type: ignore[arg-type,return-value]
    monkeypatch.setattr(registry, "INSTALLED", (*registry.INSTALLED, provider))
    return found


def user(name: str) -> int:
    with session_scope() as session:
        return add_user(session, name).id


def request(task: str, who: str, requester_id: int | None = None) -> int:
    trigger: dict[str, Any] = {
        "repo": REPO,
        "channel": "C0DEV",
        "thread": "1.0",
        "sender": {"id": f"U-{who}", "login": who},
    }
    new = jobs.NewJob(
        source=NAME,
        task=task,
        repo=REPO,
        requester=who,
        requester_id=requester_id,
        trigger=trigger,
        conversation_key=CONVERSATION,
    )
    with session_scope() as session:
        return jobs.create_job(session, new).id


def running(who: str, requester_id: int) -> int:
    job_id = request("fix add()", who, requester_id)
    with session_scope() as session:
        jobs.transition(jobs.get_job(session, job_id), JobState.RUNNING)
    return job_id


def waiting() -> list[tuple[int, int]]:
    with session_scope() as session:
        rows = session.query(SteeringMessage).order_by(SteeringMessage.id)
        return [(row.job_id, row.from_job_id) for row in rows]


def steered(job_id: int) -> bool:
    """`steer` in a session of its own, as `worker.execute` calls it."""
    with session_scope() as session:
        return steer(session, job_id, get_settings())


def job(job_id: int) -> jobs.Job:
    with session_scope() as session:
        found = jobs.get_job(session, job_id)
        session.expunge(found)
        return found


def test_the_jobs_own_requester_steers_it(writers: Writers) -> None:
    alice = user("alice")
    target = running("alice", alice)
    message = request("use the stdlib only", "alice", alice)
    assert steered(message)
    assert waiting() == [(target, message)]
    assert job(message).state == JobState.QUEUED


def test_someone_who_may_push_steers_it_too(writers: Writers) -> None:
    target = running("alice", user("alice"))
    message = request("also update the docs", "carol")
    assert steered(message)
    assert waiting() == [(target, message)]


def test_anyone_else_is_refused_by_name_and_nothing_reaches_the_agent(writers: Writers) -> None:
    running("alice", user("alice"))
    message = request("delete the tests", "bo")
    assert steered(message)
    assert waiting() == []
    refused = job(message)
    assert (refused.state, refused.outcome) == (JobState.FAILED, Outcome.REFUSED)
    assert refused.error == (
        f"Sorry @bo, I only take requests from people who can push to `{REPO}`. "
        "Ask a maintainer to mention me, or to give you write access."
    )


def test_a_forge_that_cannot_answer_refuses_saying_so(writers: Writers) -> None:
    writers.down = True
    target = running("alice", user("alice"))
    message = request("also update the docs", "carol")
    assert steered(message)
    assert job(message).error == (
        f"I could not reach the forge to check who may steer job {target}: HTTP 503"
    )


def test_a_second_delivery_of_the_same_message_waits_once(writers: Writers) -> None:
    alice = user("alice")
    running("alice", alice)
    message = request("use the stdlib only", "alice", alice)
    assert steered(message) and steered(message)
    assert len(waiting()) == 1


def test_a_command_or_a_request_with_no_running_job_is_not_steering(writers: Writers) -> None:
    alice = user("alice")
    assert not steered(request("fix add()", "alice", alice))  # nothing runs yet
    running("alice", alice)
    assert not steered(request("stop", "alice", alice))
    assert waiting() == []
