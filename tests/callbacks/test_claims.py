"""One try owns a callback at a time (`store.callbacks.claim`): a copy of its message that runs
while the first try is still posting (the reconciler's copy of one that waited in a backed-up
queue) leaves it to that try, so a reply is posted once. A try that ends gives the claim up; one
whose worker died holds it only for its lease."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest

from resolver.callbacks.send import send
from resolver.contract.callbacks import Reply
from resolver.core.settings import get_settings
from resolver.store import callbacks
from resolver.store.db import session_scope
from resolver.store.models import Callback, utcnow
from tests.callbacks.test_actions import Installed, new_callback, new_job, sixth  # noqa: F401
from tests.integrations.sixth.provider import conversation

BOTH = pytest.mark.usefixtures("backend")  # each test on SQLite and on PostgreSQL


def _row(callback_id: int) -> Callback:
    with session_scope() as session:
        row = session.get(Callback, callback_id)
        assert row is not None
        session.expunge(row)
        return row


@BOTH
def test_a_copy_that_runs_while_the_first_try_posts_leaves_it_to_that_try(
    sixth: Installed,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job_id = new_job()
    callback_id = new_callback(Reply(job_id=job_id, text="done"), job_id)
    posting, answer = threading.Event(), threading.Event()
    real_post = conversation.SixthThread.post

    def held_post(self: conversation.SixthThread, text: str, tag: str | None = None) -> Any:
        if not posting.is_set():  # the first try is inside its post, its answer not back yet
            posting.set()
            assert answer.wait(10)
        return real_post(self, text, tag)

    monkeypatch.setattr(conversation.SixthThread, "post", held_post)
    settings = get_settings()
    first = threading.Thread(target=send, args=(callback_id, settings))
    first.start()
    try:
        assert posting.wait(10)
        assert send(callback_id, settings) is None  # the copy: nothing to do
    finally:
        answer.set()
        first.join(10)
    assert [line["tag"] for line in sixth.lines("post")] == [f"reply-{callback_id}"]
    row = _row(callback_id)
    assert row.state == "sent" and row.claimed_until is None


@BOTH
def test_a_claim_is_given_up_when_its_try_ends_and_lapses_when_its_worker_died(
    sixth: Installed,  # noqa: F811
) -> None:
    job_id = new_job()
    callback_id = new_callback(Reply(job_id=job_id, text="done"), job_id)
    with session_scope() as session:
        assert callbacks.claim(session, callback_id, 150)  # a try whose worker was killed
    with session_scope() as session:
        assert not callbacks.claim(session, callback_id, 150)
        row = session.get(Callback, callback_id)
        assert row is not None
        row.due_at = utcnow() - timedelta(minutes=10)
    with session_scope() as session:
        assert callbacks.stalled_callbacks(session, 60) == []  # held: not sent again yet
        row = session.get(Callback, callback_id)
        assert row is not None
        row.claimed_until = utcnow() - timedelta(seconds=1)  # its lease ran out
    with session_scope() as session:
        assert callbacks.stalled_callbacks(session, 60) == [callback_id]
    assert send(callback_id, get_settings()) is None
    assert _row(callback_id).state == "sent"
    with session_scope() as session:
        assert not callbacks.claim(session, callback_id, 150)  # ended: nothing to own
