"""Real Redis, real Celery worker and beat processes: nothing is lost, nothing runs twice. Each
test runs on SQLite and on PostgreSQL: a prefork worker on PostgreSQL once shared its parent's
connection, which no SQLite run could show."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from resolver.broker.outbox import publish_job, waiting_message_ids
from resolver.core.states import JobState
from resolver.store import jobs
from resolver.store.accounts import add_user
from resolver.store.db import session_scope
from resolver.store.vault import Vault, store_credential
from tests.conftest import TEST_REDIS
from tests.support import procs

pytestmark = pytest.mark.usefixtures("backend")


@pytest.fixture
def spawn(resolver_env) -> Iterator:
    started = []

    def _spawn(
        kind: str,
        name: str = "w1",
        concurrency: int = 1,
        pool: str = "prefork",
        queues: str = "jobs,callbacks,default",
        **extra_env: str,
    ):
        log = resolver_env.tmp / f"{kind}-{name}.log"
        env = resolver_env.child_env(PWD_FOR_TEST=str(resolver_env.tmp), **extra_env)
        if kind == "worker":
            proc = procs.start_worker(env, log, name, concurrency, pool, queues)
        else:
            proc = procs.start_beat(env, log, resolver_env.tmp / "beat-schedule")
        started.append(proc)
        return proc

    yield _spawn
    for proc in started:
        procs.kill(proc)


def queue_job(source: str, requester_id: int | None = None, **trigger) -> int:
    with session_scope() as session:
        job = jobs.create_job(
            session,
            jobs.NewJob(source=source, task="t", trigger=trigger, requester_id=requester_id),
        )
    with session_scope() as session:
        publish_job(session, job.id)
    return job.id


def one_requesters_sleeps(marker: Path, count: int) -> list[int]:
    """`count` queued one-second jobs of one requester, each writing to `marker` as it ends."""
    with session_scope() as session:
        user_id = add_user(session, "ada").id
    return [
        queue_job("test-sleep", requester_id=user_id, seconds=1, marker=str(marker))
        for _ in range(count)
    ]


def every_one_succeeds(ids: list[int], seconds: float) -> None:
    done = lambda: all(job_state(i).state == JobState.SUCCEEDED for i in ids)  # noqa: E731
    procs.wait_until(done, seconds, "every job")


def job_state(job_id: int) -> jobs.Job:
    with session_scope() as session:
        return jobs.get_job(session, job_id)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_sigkilled_worker_job_runs_again_within_15s_and_finishes_once(
    resolver_env, spawn
) -> None:
    marker = resolver_env.tmp / "marker.txt"
    spawn("beat")
    first = spawn("worker", "first")
    gate = resolver_env.tmp / "gate"
    job_id = queue_job("test-sleep", seconds=120, marker=str(marker), gate=str(gate))
    procs.wait_until(
        lambda: lines(marker.with_suffix(".started")), 60, "the first worker to start the job"
    )
    # A second worker is up and idle, as in any deployment with more than one.
    spawn("worker", "standby")
    standby_log = resolver_env.tmp / "worker-standby.log"
    procs.wait_until(lambda: "ready." in standby_log.read_text(), 60, "the standby worker")
    procs.kill(first)
    killed_at = time.monotonic()
    procs.wait_until(
        lambda: len(lines(marker.with_suffix(".started"))) == 2, 30, "the job to run again"
    )
    assert time.monotonic() - killed_at < 15
    gate.touch()
    procs.wait_until(lambda: job_state(job_id).state == JobState.SUCCEEDED, 30, "the job to end")
    assert lines(marker) == [f"done {job_id}"]
    assert job_state(job_id).attempts == 2


def test_jobs_lost_by_a_redis_flush_come_back_and_run_once(resolver_env, spawn) -> None:
    marker = resolver_env.tmp / "marker.txt"
    job_ids = [queue_job("test-sleep", seconds=0, marker=str(marker)) for _ in range(3)]
    client = redis.Redis.from_url(TEST_REDIS)
    assert len(waiting_message_ids(client)) == 3
    client.flushdb()
    assert waiting_message_ids(client) == set()
    spawn("beat")
    spawn("worker")
    for job_id in job_ids:
        procs.wait_until(
            lambda j=job_id: job_state(j).state == JobState.SUCCEEDED, 45, f"job {job_id}"
        )
    assert sorted(lines(marker)) == sorted(f"done {j}" for j in job_ids)
    assert all(job_state(j).attempts == 1 for j in job_ids)


def test_a_planted_token_never_reaches_logs_or_the_database(resolver_env, spawn) -> None:
    planted = "ghp_PlantedToken_" + "Zq9" * 10
    with session_scope() as session:
        user = add_user(session, "ada")
        store_credential(
            session,
            Vault(resolver_env.vars["RESOLVER_SECRET_KEYS"].split(",")),
            provider="github",
            kind="pat",
            secret=planted,
            user_id=user.id,
        )
        job = jobs.create_job(
            session, jobs.NewJob(source="test-careless", task="t", requester_id=user.id)
        )
    with session_scope() as session:
        publish_job(session, job.id)
    spawn("worker")
    procs.wait_until(lambda: job_state(job.id).state == JobState.FAILED, 60, "the job to fail")
    log_text = (resolver_env.tmp / "worker-w1.log").read_text()
    assert "test.careless" in log_text and "formatted ******" in log_text
    assert "failed while using ******" in log_text
    assert job_state(job.id).error == "internal error: RuntimeError"
    stored = b"".join(p.read_bytes() for p in resolver_env.tmp.glob("resolver.db*"))
    for haystack in (log_text.encode(), stored):
        assert planted.encode() not in haystack
        assert planted[4:20].encode() not in haystack


def test_a_job_over_the_per_user_cap_waits_queued_then_runs(resolver_env, spawn) -> None:
    marker = resolver_env.tmp / "marker.txt"
    with session_scope() as session:
        user_id = add_user(session, "ada").id
    first = queue_job("test-sleep", requester_id=user_id, seconds=3, marker=str(marker))
    spawn("worker", concurrency=2, RESOLVER_MAX_JOBS_PER_USER="1")
    procs.wait_until(lambda: job_state(first).state == JobState.RUNNING, 30, "the first job")
    second = queue_job("test-sleep", requester_id=user_id, seconds=0, marker=str(marker))
    time.sleep(1.5)
    assert job_state(second).state == JobState.QUEUED
    procs.wait_until(lambda: job_state(second).state == JobState.SUCCEEDED, 30, "the second job")
    assert job_state(second).started_at >= job_state(first).finished_at
    assert lines(marker) == [f"done {first}", f"done {second}"]


def test_jobs_taken_at_once_keep_their_requesters_cap(resolver_env, spawn) -> None:
    """Four jobs of one requester whose cap is 1 reach four worker processes at once: they run
    one after another, never two at a time. Each worker counts the running jobs and takes its
    job's lease as one step, which no other worker's count of that requester can come between."""
    ids = one_requesters_sleeps(resolver_env.tmp / "marker.txt", 4)
    spawn("worker", concurrency=4, RESOLVER_MAX_JOBS_PER_USER="1")
    every_one_succeeds(ids, 90)
    runs = sorted((job_state(i).started_at, job_state(i).finished_at) for i in ids)
    for (_, ended), (started, _) in itertools.pairwise(runs):
        assert started >= ended, runs


def test_the_job_time_limit_stops_a_job_on_the_threads_pool(resolver_env, spawn) -> None:
    """Celery's threads pool has no time limit of its own: the job's heartbeat keeps it."""
    marker = resolver_env.tmp / "marker.txt"
    slow = queue_job("test-sleep", seconds=600, marker=str(marker))
    quick = queue_job("test-sleep", seconds=0, marker=str(marker))
    spawn("worker", concurrency=4, pool="threads", RESOLVER_JOB_TIME_LIMIT="10")
    procs.wait_until(lambda: job_state(quick).state == JobState.SUCCEEDED, 30, "the quick job")
    procs.wait_until(lambda: job_state(slow).state == JobState.RUNNING, 30, "the slow job")
    procs.wait_until(lambda: job_state(slow).state == JobState.FAILED, 40, "the time limit")
    stopped = job_state(slow)
    assert "time limit (10 s)" in (stopped.error or "")
    assert stopped.finished_at is not None and stopped.started_at is not None
    assert (stopped.finished_at - stopped.started_at).total_seconds() < 25
    assert lines(marker) == [f"done {quick}", f"done {slow}"]  # stopped, not killed


def test_a_job_waiting_for_a_slot_is_never_published_twice(resolver_env, spawn) -> None:
    """With one slot, later jobs wait in the queue; a job that ends publishes only a job a
    worker parked (took and set aside), never one whose message still waits."""
    marker = resolver_env.tmp / "marker.txt"
    ids = one_requesters_sleeps(marker, 4)
    spawn("worker", concurrency=1, RESOLVER_MAX_JOBS_PER_USER="1")
    every_one_succeeds(ids, 60)
    log = (resolver_env.tmp / "worker-w1.log").read_text()
    received = len(re.findall(r"Task resolver\.run_job\[[^\]]+\] received", log))
    parked = len(re.findall(r"job\.waiting_for_(capacity|conversation)\b", log))
    assert received == len(ids) + parked  # one message per job, and one per time it waited
    assert "job.skipped" not in log  # no message found its job taken or done
    assert lines(marker) == [f"done {i}" for i in ids]
