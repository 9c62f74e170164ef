"""Group commit: triggers written in one batch end as if written one by one, on both databases.

Batches are built from signed deliveries that go through the real verify, parse and route, then
handed to the writer directly, so what lands in one batch is decided by the test, not by timing.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
import redis
from starlette.testclient import TestClient

from resolver.broker.celery_app import ACKNOWLEDGE, DELIVER
from resolver.contract.triggers import number_of, read_trigger
from resolver.ingress.batching import GroupWriter, write_batch
from resolver.ingress.intake import Accepted, Pending
from tests.conftest import ResolverEnv, redis_db_url
from tests.integrations.conftest import Store, reset_caches, webhook_vars
from tests.integrations.deliveries import BY_NAME, Delivery, github, load, post, slack
from tests.support.metrics import samples

REDIS = redis_db_url(8)
CODERTOCAT = "21031067"
SLACK_BOB = "T061EG9R6:U061F7AUR"


@pytest.fixture
def store(
    backend: str, resolver_env: ResolverEnv, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    """The webhook settings over a migrated SQLite or PostgreSQL database, and a Redis db of its
    own (other suites run workers on theirs, which would take the messages looked at here)."""
    for key, value in webhook_vars(resolver_env.tmp / "unused.db").items():
        if key != "RESOLVER_DATABASE_URL":
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("RESOLVER_REDIS_URL", REDIS)
    redis.Redis.from_url(REDIS).flushdb()
    reset_caches()
    yield Store()
    reset_caches()


def routed(delivery: Delivery) -> Pending:
    """A signed delivery through the real verify, parse and route."""
    from resolver.core.settings import get_settings
    from resolver.ingress.endpoint import route

    headers = {name.lower(): value for name, value in delivery.headers.items()}
    integration = BY_NAME[delivery.path.rsplit("/", 1)[1]]
    pending = route(integration, headers, delivery.body, get_settings())
    assert isinstance(pending, Pending)
    return pending


def mention(number: int, *, sender: str = CODERTOCAT, delivery: str | None = None) -> Delivery:
    payload = load("github", "issue_comment.created__on_issue")
    payload["comment"]["body"] = f"@resolver fix issue {number}"
    payload["issue"]["number"] = number
    payload["sender"]["id"] = int(sender)
    payload["sender"]["login"] = f"user{sender}"
    return github("issue_comment.created", payload, delivery=delivery)


def thread_reply(thread: str) -> Delivery:
    payload = load("slack", "message__thread_reply")
    payload["event"]["thread_ts"] = thread
    payload["event_id"] = f"Ev-reply-{thread}"
    return slack(payload)


def queued_args(queue: str) -> list[int]:
    """The first argument of every task message waiting in `queue` (kombu's Redis envelope)."""
    client = redis.Redis.from_url(REDIS)
    bodies = [json.loads(raw)["body"] for raw in client.lrange(queue, 0, -1)]
    return sorted(json.loads(base64.b64decode(body))[0][0] for body in bodies)


def queued_tasks(queue: str) -> list[tuple[str, int]]:
    """Every task message waiting in `queue`'s first priority step: its task and first argument."""
    client = redis.Redis.from_url(REDIS)
    messages = [json.loads(raw) for raw in client.lrange(queue, 0, -1)]
    return sorted(
        (m["headers"]["task"], json.loads(base64.b64decode(m["body"]))[0][0]) for m in messages
    )


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_one_batch_answers_as_one_by_one_would(store: Store, configure_caps: Any) -> None:
    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    store.link("slack", SLACK_BOB, "U061F7AUR", user="bob")
    first = mention(1, delivery="first")
    answers = write_batch(
        [
            routed(first),
            routed(first),  # a copy in the same batch
            routed(mention(1)),  # a follow-up in the same conversation
            routed(mention(2, sender="999")),  # nobody links this sender
            routed(slack(load("slack", "app_mention__in_thread"))),
            routed(thread_reply("1515449483.000108")),  # follows up the mention just above
            routed(thread_reply("1515440000.000001")),  # a thread without a job
        ]
    )
    assert all(isinstance(answer, Accepted) for answer in answers)
    kinds = [answer.kind for answer in answers if isinstance(answer, Accepted)]
    assert kinds == [
        "created", "duplicate", "created", "unlinked", "created", "created", "not_followup"
    ]  # fmt: skip
    created, duplicate, followup, unlinked, thread, reply, _ = answers
    assert isinstance(created, Accepted) and isinstance(duplicate, Accepted)
    assert duplicate.job_id == created.job_id
    jobs = {job.id: job for job in store.jobs()}
    assert len(jobs) == 4
    assert isinstance(followup, Accepted) and followup.job_id
    assert read_trigger(jobs[followup.job_id].trigger).origin.previous_job_id == created.job_id
    assert isinstance(thread, Accepted) and isinstance(reply, Accepted) and reply.job_id
    assert read_trigger(jobs[reply.job_id].trigger).origin.previous_job_id == thread.job_id
    # The user cap is 1: each follow-up waits behind the job before it, and its status says so.
    assert (followup.queued_behind, reply.queued_behind) == (1, 1)
    assert "behind 1 job" in store.status_text(followup.job_id)
    assert isinstance(unlinked, Accepted)
    notices = store.notices()
    [told] = [n for n in notices if n.kind == "unlinked"]
    assert told.conversation_key == "github:Codertocat/Hello-World#2"
    # Each job's 👀 and status, and the unlinked sender's notice.
    assert [len(answer.callbacks) for answer in (followup, unlinked, reply)] == [2, 1, 2]
    deliveries = store.deliveries()
    assert sorted((d.job_id, d.outcome) for d in deliveries if d.job_id) == [
        (job_id, "job") for job_id in sorted(jobs)
    ]
    assert [d.outcome for d in deliveries if not d.job_id] == ["unlinked"]
    # One message per trigger: a new job's acknowledgement, which the callbacks side turns into
    # its 👀, its job message and its first status; the notice's own.
    assert queued_args("jobs") == []
    assert queued_tasks("callbacks") == sorted(
        [(ACKNOWLEDGE, job_id) for job_id in jobs] + [(DELIVER, unlinked.callbacks[0])]
    )


@pytest.fixture
def configure_caps(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESOLVER_MAX_JOBS_PER_USER", "1")
    reset_caches()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_copies_racing_through_two_writers_make_one_job(store: Store) -> None:
    """Two writers stand for two server processes: the unique constraint decides."""
    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    copies = [routed(mention(1, delivery="raced")) for _ in range(20)]
    writers = [GroupWriter(write_batch, name=f"test-writer-{n}", max_batch=4) for n in (1, 2)]
    start = threading.Barrier(len(copies))

    def send(n: int) -> Accepted:
        start.wait()
        return writers[n % 2].submit(copies[n]).result(timeout=60)

    results: list[Accepted] = []
    threads = [
        threading.Thread(target=lambda n=n: results.append(send(n))) for n in range(len(copies))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    [job] = store.jobs()
    assert sorted(result.kind for result in results) == ["created"] + ["duplicate"] * 19
    assert {result.job_id for result in results} == {job.id}
    assert len(store.deliveries()) == 1


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_a_sender_known_only_by_login_is_found(store: Store) -> None:
    store.link("github", "someone-else", "USER21031067")  # the id differs; the login matches
    unlinked_by_id, found = write_batch([routed(mention(1, sender="77")), routed(mention(2))])
    assert isinstance(unlinked_by_id, Accepted) and unlinked_by_id.kind == "unlinked"
    assert isinstance(found, Accepted) and found.kind == "created"
    [job] = store.jobs()
    assert job.id == found.job_id and job.requester_id is not None


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_a_trigger_that_cannot_be_stored_fails_alone(store: Store) -> None:
    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    good = routed(mention(1))
    subject = good.trigger.subject.model_copy(update={"part": {"value": object()}})
    unstorable = dataclasses.replace(good.trigger, subject=subject)
    bad = dataclasses.replace(routed(mention(2)), trigger=unstorable)
    answers = write_batch([good, bad, routed(mention(3))])
    assert [type(answer).__name__ for answer in answers][::2] == ["Accepted", "Accepted"]
    assert isinstance(answers[1], Exception)
    assert [number_of(read_trigger(job.trigger)) for job in store.jobs()] == [1, 3]
    assert len(store.deliveries()) == 2  # the bad one's sender may try again


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_mention_over_http(store: Store) -> None:
    from resolver.app import create_app

    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    delivery = mention(1)
    with TestClient(create_app()) as client:
        created = post(client, delivery)
        again = post(client, delivery)
    [job] = store.jobs()
    assert (created.status_code, created.json()) == (202, {"job_id": job.id})
    assert (again.status_code, again.json()) == (200, {"job_id": job.id, "duplicate": True})


def test_each_batch_s_record_and_publish_times_are_on_the_metrics_page(store: Store) -> None:
    from resolver.app import create_app

    store.link("github", CODERTOCAT, f"user{CODERTOCAT}")
    with TestClient(create_app()) as client:
        before = samples(client.get("/metrics").text)
        assert post(client, mention(1)).status_code == 202
        after = samples(client.get("/metrics").text)
    grew = {key: after[key] - before.get(key, 0.0) for key in after}
    for stage in ("record", "publish"):
        assert grew[("resolver_intake_seconds_count", (("stage", stage),))] == 1
        assert 0 < grew[("resolver_intake_seconds_sum", (("stage", stage),))] < 10
    assert grew[("resolver_intake_batch_triggers_count", ())] == 1
    assert grew[("resolver_intake_batch_triggers_sum", ())] == 1


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_an_unreachable_database_is_503(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from resolver.app import create_app

    monkeypatch.setenv("RESOLVER_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:9/none")
    reset_caches()
    with TestClient(create_app()) as client:
        response = post(client, mention(1))
    assert response.status_code == 503 and response.headers["retry-after"]


class Recorder:
    """A batch writer that records its batches and can hold the first one until released."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.started = threading.Event()
        self.release = threading.Event()

    def write(self, batch: Any) -> list[int | Exception]:
        self.started.set()
        self.release.wait(timeout=30)
        self.batches.append(list(batch))
        if -1 in batch:
            raise RuntimeError("the whole batch failed")
        return [ValueError(item) if item == 0 else item * 10 for item in batch]


def held(recorder: Recorder, max_batch: int = 10) -> tuple[GroupWriter[int, int], Future[int]]:
    """A writer busy with a first batch of one item, which the recorder holds."""
    writer: GroupWriter[int, int] = GroupWriter(recorder.write, name="test", max_batch=max_batch)
    first = writer.submit(1)
    assert recorder.started.wait(timeout=30)
    return writer, first


def test_what_queues_during_a_batch_forms_the_next_one() -> None:
    recorder = Recorder()
    writer, first = held(recorder, max_batch=3)
    later = [writer.submit(n) for n in (2, 3, 4, 5, 6)]
    recorder.release.set()
    assert [future.result(timeout=30) for future in (first, *later)] == [10, 20, 30, 40, 50, 60]
    assert recorder.batches == [[1], [2, 3, 4], [5, 6]]


def test_a_cancelled_item_is_not_written() -> None:
    recorder = Recorder()
    writer, _ = held(recorder)
    gone, kept = writer.submit(2), writer.submit(3)
    assert gone.cancel()
    recorder.release.set()
    assert kept.result(timeout=30) == 30
    assert recorder.batches == [[1], [3]]


def test_failures_reach_their_own_requests_and_the_writer_carries_on() -> None:
    recorder = Recorder()
    writer, _ = held(recorder)
    failing_item, fine = writer.submit(0), writer.submit(2)
    recorder.release.set()
    with pytest.raises(ValueError):
        failing_item.result(timeout=30)
    assert fine.result(timeout=30) == 20
    with pytest.raises(RuntimeError):
        writer.submit(-1).result(timeout=30)
    assert writer.submit(4).result(timeout=30) == 40


def test_a_batch_waits_for_company_until_it_is_full() -> None:
    recorder = Recorder()
    recorder.release.set()
    writer: GroupWriter[int, int] = GroupWriter(recorder.write, name="test", max_batch=2, linger=60)
    first, second = writer.submit(1), writer.submit(2)
    assert (first.result(timeout=30), second.result(timeout=30)) == (10, 20)
    assert recorder.batches == [[1, 2]]


def test_coroutines_waiting_on_one_loop_are_woken_once_per_batch() -> None:
    recorder = Recorder()
    writer, first = held(recorder)
    wakeups: list[object] = []

    async def requests() -> list[int | str]:
        loop = asyncio.get_running_loop()
        call_soon_threadsafe = loop.call_soon_threadsafe

        def counted(callback: Any, *args: Any) -> Any:
            wakeups.append(callback)
            return call_soon_threadsafe(callback, *args)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign, assignment]
        waiting = [asyncio.ensure_future(writer.write(n)) for n in (2, 0, 3)]
        await asyncio.sleep(0)  # each is queued before the held batch is let go
        recorder.release.set()
        done = await asyncio.gather(*waiting, return_exceptions=True)
        return [repr(item) if isinstance(item, BaseException) else item for item in done]

    assert asyncio.run(requests()) == [20, "ValueError(0)", 30]
    assert first.result(timeout=30) == 10
    assert recorder.batches == [[1], [2, 0, 3]]
    assert len(wakeups) == 1


def test_a_cancelled_coroutine_is_not_written() -> None:
    recorder = Recorder()
    writer, _ = held(recorder)

    async def requests() -> int:
        gone = asyncio.ensure_future(writer.write(2))
        kept = asyncio.ensure_future(writer.write(3))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        recorder.release.set()
        return await kept

    assert asyncio.run(requests()) == 30
    assert recorder.batches == [[1], [3]]
