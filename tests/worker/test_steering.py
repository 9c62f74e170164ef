"""Steering through the worker's own `execute`, on the real database and Redis: a request to a
running job of its conversation joins its inbox, the agent's inbox hands it over once, and a
message the job never read runs as a follow-up. (End to end, with the LLM: tests/e2e.)"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from sqlalchemy.orm import Session

from resolver.core.job import InboxMessage, JobContext, RunResult
from resolver.core.settings import get_settings
from resolver.core.states import JobState, Outcome
from resolver.store import jobs, slots
from resolver.store.accounts import add_user
from resolver.store.db import session_scope
from resolver.store.models import SteeringMessage
from resolver.worker.execute import Runner, execute

CONVERSATION = "github:octo/widgets:7"


@dataclass
class Blocking:
    """A runner that holds the first job until released; what it took from its inbox."""

    release: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    took: list[list[InboxMessage]] = field(default_factory=list)
    read_inbox: bool = True
    ran: list[int] = field(default_factory=list)

    def __call__(self, _session: Session, ctx: JobContext) -> RunResult:
        self.ran.append(ctx.job_id)
        self.started.set()
        assert self.release.wait(60)
        if self.read_inbox and ctx.inbox is not None:
            self.took.append(ctx.inbox(3))
            self.took.append(ctx.inbox(4))  # each message once
        return RunResult(JobState.SUCCEEDED, Outcome.ANSWERED, result={"summary": "done"})

    def runner_for(self, _source: str) -> Runner:
        return self


def new_job(task: str, requester_id: int) -> int:
    with session_scope() as session:
        job = jobs.create_job(
            session,
            jobs.NewJob(
                source="github",
                task=task,
                requester="alice",
                requester_id=requester_id,
                trigger={"conversation_key": CONVERSATION},
                conversation_key=CONVERSATION,
            ),
        )
        return job.id


def job_of(job_id: int) -> jobs.Job:
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        session.expunge(job)
        return job


def inbox_rows() -> list[SteeringMessage]:
    with session_scope() as session:
        rows = list(session.query(SteeringMessage).order_by(SteeringMessage.id))
        for row in rows:
            session.expunge(row)
        return rows


@pytest.fixture
def alice(resolver_env) -> int:
    with session_scope() as session:
        return add_user(session, "alice").id


@pytest.fixture
def running(alice: int) -> Iterator[Callable[[Blocking], tuple[int, threading.Thread]]]:
    threads: list[tuple[Blocking, threading.Thread]] = []

    def start(runner: Blocking) -> tuple[int, threading.Thread]:
        job_id = new_job("fix add()", alice)
        thread = threading.Thread(target=execute, args=(job_id, runner.runner_for, get_settings()))
        thread.start()
        assert runner.started.wait(60)
        threads.append((runner, thread))
        return job_id, thread

    yield start
    for runner, thread in threads:
        runner.release.set()
        thread.join(60)


def test_a_request_to_a_running_job_is_taken_once_at_its_next_step(alice, running) -> None:
    runner = Blocking()
    first, thread = running(runner)
    second = new_job("use the new helper instead", alice)

    execute(second, runner.runner_for, get_settings())

    waiting = job_of(second)
    assert (waiting.state, waiting.message_id) == ("queued", slots.PARKED)
    assert waiting.result["steering"] == first
    [row] = inbox_rows()
    assert (row.job_id, row.from_job_id, row.taken_at) == (first, second, None)
    execute(
        second, runner.runner_for, get_settings()
    )  # a second delivery of its message changes nothing
    assert len(inbox_rows()) == 1

    runner.release.set()
    thread.join(60)

    assert runner.took == [[InboxMessage("alice", "use the new helper instead")], []]
    delivered = job_of(second)
    assert (delivered.state, delivered.outcome) == ("succeeded", "answered")
    assert delivered.result["steered"] == first
    assert inbox_rows()[0].taken_at_step == 3
    assert runner.ran == [first]  # the steering request never ran on its own


def test_a_message_the_job_never_read_runs_as_a_follow_up(alice, running) -> None:
    runner = Blocking(read_inbox=False)
    first, thread = running(runner)
    second = new_job("also add a docstring", alice)
    execute(second, runner.runner_for, get_settings())
    assert job_of(second).message_id == slots.PARKED

    runner.release.set()
    thread.join(60)

    published = job_of(second)
    assert published.state == "queued" and published.message_id != slots.PARKED
    execute(second, runner.runner_for, get_settings())
    assert runner.ran == [first, second]
    assert job_of(second).state == "succeeded"
    assert inbox_rows()[0].taken_at is None


def test_stop_cancels_the_running_job_and_the_messages_waiting_for_it(alice, running) -> None:
    runner = Blocking(read_inbox=False)
    first, _ = running(runner)
    second = new_job("and rename it", alice)
    execute(second, runner.runner_for, get_settings())
    stop = new_job("stop", alice)

    from resolver.worker.commands import answer_stop
    from resolver.worker.request import load

    with session_scope() as session:
        answer_stop(session, load(session, stop), get_settings())

    assert job_of(first).cancel_requested
    assert (job_of(second).state, job_of(second).outcome) == ("cancelled", "cancelled")
