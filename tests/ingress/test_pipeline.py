"""The shared ingress pipeline: providers off, body limit, queue places, the outbox on failure."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from integrations import registry
from tests.integrations.deliveries import PROVIDERS, github, load, post


def mention(text: str = "@resolver fix it", number: int = 1, repo: str = "") -> Any:
    payload = load("github", "issue_comment.created__on_issue")
    payload["comment"]["body"] = text
    payload["issue"]["number"] = number
    if repo:
        payload["repository"]["full_name"] = repo
    return github("issue_comment.created", payload)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_provider_without_a_secret_is_off(client: Any, configure: Any, provider: str) -> None:
    configure(**{f"RESOLVER_{name.upper()}": "" for name in registry.get(provider).secrets})
    assert client.post(f"/webhooks/{provider}", content=b"{}").status_code == 404
    others = [p for p in PROVIDERS if p != provider]
    assert client.post(f"/webhooks/{others[0]}", content=b"{}").status_code == 401


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unsigned_deliveries_are_never_accepted(client: Any, store: Any, provider: str) -> None:
    response = client.post(f"/webhooks/{provider}", json={"type": "url_verification"})
    assert response.status_code == 401
    assert store.jobs() == []


def test_only_post_is_routed(client: Any, store: Any) -> None:
    assert client.get("/webhooks/github").status_code == 405
    assert client.post("/webhooks/no-such-provider", content=b"{}").status_code == 404


def test_body_over_the_limit_is_413(client: Any, store: Any, configure: Any) -> None:
    configure(RESOLVER_MAX_BODY_BYTES="2048")
    delivery = mention("@resolver " + "x" * 4096)
    assert post(client, delivery).status_code == 413


def test_streamed_body_over_the_limit_is_413(client: Any, store: Any, configure: Any) -> None:
    configure(RESOLVER_MAX_BODY_BYTES="2048")

    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            yield b"x" * 256

    delivery = mention()
    headers = {k: v for k, v in delivery.headers.items() if k.lower() != "content-length"}
    response = client.post("/webhooks/github", content=chunks(), headers=headers)
    assert response.status_code == 413


def test_body_at_the_limit_is_read(client: Any, store: Any, configure: Any) -> None:
    configure(RESOLVER_MAX_BODY_BYTES="2048")
    response = client.post("/webhooks/github", content=b"x" * 2048)
    assert response.status_code == 401  # read whole, then refused for its missing signature


def test_jobs_over_the_user_cap_wait_with_their_place(
    client: Any, store: Any, configure: Any
) -> None:
    configure(RESOLVER_MAX_JOBS_PER_USER="1")
    store.link("github", "21031067", "Codertocat")
    answers = [post(client, mention(number=n)).json() for n in (1, 2, 3)]
    assert [a.get("queued_behind", 0) for a in answers] == [0, 1, 2]
    assert [job.state for job in store.jobs()] == ["queued"] * 3  # nothing dropped
    # Each is acknowledged at once (👀 and its status), and its status says its place.
    assert store.notices() == []
    acknowledged = [(c.job_id, c.action) for c in store.callbacks()]
    assert acknowledged == [
        (a["job_id"], action) for a in answers for action in ("react", "status")
    ]
    assert "Queued" in store.status_text(answers[0]["job_id"])
    third = store.status_text(answers[2]["job_id"])
    assert "behind 2 jobs" in third and "per user" in third


def test_jobs_over_the_repository_cap_wait(client: Any, store: Any, configure: Any) -> None:
    configure(RESOLVER_MAX_JOBS_PER_REPO="1", RESOLVER_MAX_JOBS_PER_USER="10")
    store.link("github", "21031067", "Codertocat")
    first = post(client, mention(number=1)).json()
    other_repo = post(client, mention(number=1, repo="Codertocat/Other")).json()
    second = post(client, mention(number=2)).json()
    assert "queued_behind" not in first and "queued_behind" not in other_repo
    assert second["queued_behind"] == 1
    assert "per repository" in store.status_text(second["job_id"])


def test_finished_jobs_do_not_hold_a_place(client: Any, store: Any, configure: Any) -> None:
    from resolver.store.db import session_scope
    from resolver.store.models import Job

    configure(RESOLVER_MAX_JOBS_PER_USER="1")
    store.link("github", "21031067", "Codertocat")
    first = post(client, mention(number=1)).json()["job_id"]
    with session_scope() as session:
        session.get(Job, first).state = "succeeded"
    assert "queued_behind" not in post(client, mention(number=2)).json()


@pytest.fixture
def failing_redis() -> Iterator[str]:
    """A Redis that refuses every write, as one does when it cannot persist (MISCONF)."""
    server = socket.create_server(("127.0.0.1", 0))
    error = b"-MISCONF Redis is configured to save RDB snapshots, but it cannot persist\r\n"

    def answer(conn: socket.socket) -> None:
        with conn:
            while conn.recv(65536):
                conn.sendall(error)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    server.close()


def test_a_job_is_accepted_when_redis_fails(
    client: Any, store: Any, configure: Any, failing_redis: str
) -> None:
    """The job is committed before publishing, so it survives; the reconciler sends it later."""
    configure(RESOLVER_REDIS_URL=failing_redis)
    store.link("github", "21031067", "Codertocat")
    response = post(client, mention())
    assert response.status_code == 202
    [job] = store.jobs()
    assert job.id == response.json()["job_id"] and job.state == "queued"
    assert job.published_at is None  # the reconciler finds its message missing and sends it


def test_unlinked_notices_are_per_person_and_conversation(client: Any, store: Any) -> None:
    for number in (1, 1, 2):
        assert post(client, mention(number=number)).json() == {"notice": "unlinked"}
    keys = [n.conversation_key for n in store.notices()]
    assert keys == ["github:Codertocat/Hello-World#1", "github:Codertocat/Hello-World#2"]
    assert all(d.outcome == "unlinked" and d.job_id is None for d in store.deliveries())


def test_a_duplicate_of_an_unlinked_delivery(client: Any, store: Any) -> None:
    delivery = mention()
    post(client, delivery)
    again = post(client, delivery)
    assert again.status_code == 200 and again.json() == {"job_id": None, "duplicate": True}
