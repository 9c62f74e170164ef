"""Callbacks through a real worker: retried on 5xx and 429 (honouring Retry-After), never on 4xx."""

from __future__ import annotations

import time

from resolver.broker.publish import publish_callback
from resolver.store.callbacks import record_callback
from resolver.store.db import session_scope
from resolver.store.models import Callback
from tests.support import procs
from tests.support.scripted_post import ScriptedPost
from tests.worker.test_execute import spawn  # noqa: F401 - a fixture


def queue(tmp, script: list[str]) -> int:
    payload = ScriptedPost(script=tuple(script), calls=str(tmp / "calls.txt"))
    with session_scope() as session:
        callback_id = record_callback(session, "test-forge", payload).id
    publish_callback(callback_id)
    return callback_id


def load(callback_id: int) -> Callback:
    with session_scope() as session:
        callback = session.get(Callback, callback_id)
        assert callback is not None
        list(callback.attempts)
        return callback


def test_transient_failures_are_retried_until_sent(resolver_env, spawn) -> None:  # noqa: F811
    spawn("worker")
    callback_id = queue(resolver_env.tmp, ["502", "429:2", "ok"])
    procs.wait_until(lambda: load(callback_id).state == "sent", 60, "the callback to be sent")
    callback = load(callback_id)
    assert [(a.outcome, a.status) for a in callback.attempts] == [
        ("transient", 502),
        ("transient", 429),
        ("ok", None),
    ]
    assert callback.attempts[1].retry_after == 2.0
    assert callback.result == {"v": 1, "message": {"comment_id": 7}}
    calls = [float(x) for x in (resolver_env.tmp / "calls.txt").read_text().split()]
    assert calls[2] - calls[1] >= 2.0, "Retry-After was not honoured"


def test_a_4xx_is_recorded_and_never_retried(resolver_env, spawn) -> None:  # noqa: F811
    spawn("worker")
    callback_id = queue(resolver_env.tmp, ["404", "ok"])
    procs.wait_until(lambda: load(callback_id).state == "failed", 60, "the callback to fail")
    time.sleep(3)
    callback = load(callback_id)
    assert [(a.outcome, a.status) for a in callback.attempts] == [("permanent", 404)]
    assert callback.error == "HTTP 404"
    assert len((resolver_env.tmp / "calls.txt").read_text().split()) == 1


def test_a_callback_whose_message_was_lost_is_found_again(resolver_env) -> None:
    from datetime import timedelta

    from resolver.store.callbacks import stalled_callbacks

    with session_scope() as session:
        old = record_callback(session, "test-forge", ScriptedPost())
        old.due_at = old.created_at - timedelta(minutes=5)
        later = record_callback(session, "test-forge", ScriptedPost())
        later.due_at = later.created_at + timedelta(minutes=4)  # waiting out a backoff
        fresh = record_callback(session, "test-forge", ScriptedPost())
    with session_scope() as session:
        assert stalled_callbacks(session, 60) == [old.id]
        assert fresh.id not in stalled_callbacks(session, 60)
