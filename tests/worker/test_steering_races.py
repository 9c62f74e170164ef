"""A request to a running job (steering) stopped while it joins the job's inbox, or while the
job's agent takes it: the stop runs once the other side has read the request and before it
writes, and commits first, or waits for the request's lock and then sees what it became; on
SQLite and PostgreSQL. (Steering itself: tests/worker/test_steering.py.)"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from resolver.callbacks import record
from resolver.core.settings import get_settings
from resolver.store import jobs
from resolver.store import steering as inboxes
from resolver.store.db import session_scope
from resolver.worker import steering
from tests.worker.test_steering import job_of, new_job
from tests.worker.test_stop_races import running

__all__ = ["running"]  # the fixture, used by name


def _during(monkeypatch: pytest.MonkeyPatch, module: object, name: str, other: Callable[[], None]):
    """Run `other` in a thread of its own the first time `module.name` is called, before it
    runs: to its commit, or for 2 s while it waits for a lock the caller holds."""
    real, threads = getattr(module, name), []

    def the_other_first(*args, **kwargs):
        if not threads:
            threads.append(threading.Thread(target=other))
            threads[0].start()
            threads[0].join(2)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, the_other_first)
    return threads


def _stop(job_id: int, answers: list[list[int] | None]) -> Callable[[], None]:
    def stop() -> None:
        with session_scope() as session:
            answers.append(record.stop_job(session, jobs.get_job(session, job_id), "wendy"))

    return stop


def test_a_request_stopped_as_it_joins_the_running_job_stays_stopped(running, monkeypatch) -> None:
    request = new_job("also fix sub()", job_of(running).requester_id)
    answers: list[list[int] | None] = []
    threads = _during(monkeypatch, inboxes, "add_message", _stop(request, answers))

    with session_scope() as session:
        assert steering.steer(session, request, get_settings())
    threads[0].join(60)

    job = job_of(request)
    assert (job.state, job.result.get("stopped_by")) == ("cancelled", "wendy")
    assert answers and answers[0]


def test_a_request_stopped_as_the_agent_takes_it_is_delivered_and_the_stop_says_so(
    running, monkeypatch
) -> None:
    request = new_job("also fix sub()", job_of(running).requester_id)
    with session_scope() as session:
        target, source = jobs.get_job(session, running), jobs.get_job(session, request)
        inboxes.add_message(session, target, source)
    answers: list[list[int] | None] = []
    threads = _during(monkeypatch, jobs, "finish_job", _stop(request, answers))

    with session_scope() as session:
        took = steering.inbox_for(session, running, get_settings())(3)
    threads[0].join(60)

    job = job_of(request)
    assert [message.text for message in took] == ["also fix sub()"]
    assert (job.state, job.outcome, job.result.get("stopped_by")) == ("succeeded", "answered", None)
    assert answers == [None]  # "has already ended": nothing of the stop written
