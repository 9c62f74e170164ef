"""Forget, revoke and unlink pressed twice at once (a double click, two tabs): the thing is
done once, and the second press is told it is gone, never a 500. The presses meet after each
has read what it acts on; on SQLite and PostgreSQL, through the app."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from resolver.core.states import JobState, Outcome
from resolver.store import accounts, forget, jobs, web_sessions
from resolver.store.db import session_scope
from resolver.store.models import Identity, Job, User
from tests.web.conftest import browser, csrf_of, sign_in
from tests.web.test_buttons import _linked


def _meet(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
    """Each press calls `owner.name` once the other has got there too (SQLite's one writer
    may hold the other back: then it waits no longer than a second)."""
    real: Callable[..., object] = getattr(owner, name)
    meet = threading.Barrier(2, timeout=1)

    def met(*args: object, **kwargs: object) -> object:
        with contextlib.suppress(threading.BrokenBarrierError):
            meet.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, met)


def _twice(app, forge, login: str, path: str, page: str) -> list[str]:
    """`login` presses `path` in two tabs of one session at once; each flash after it."""
    first = browser(app)
    sign_in(first, forge, login)
    second = browser(app)
    second.cookies.update(first.cookies)
    tabs: list[TestClient] = [first, second]
    token = csrf_of(first, page)
    start = threading.Barrier(2)

    def press(tab: TestClient) -> int:
        start.wait()
        return tab.post(path, data={"csrf": token}).status_code

    with ThreadPoolExecutor(2) as pool:
        codes = list(pool.map(press, tabs))
    assert codes == [303, 303]
    return [tab.get(page).text for tab in tabs]


def _ended_job_of(user_id: int) -> int:
    with session_scope() as session:
        new = jobs.NewJob(source="github", task="a secret plan", requester_id=user_id)
        job = jobs.create_job(session, new)
        jobs.transition(job, JobState.RUNNING)
        jobs.finish_job(session, job, JobState.SUCCEEDED, Outcome.ANSWERED)
        return job.id


def test_forget_pressed_twice_at_once_forgets_once(
    app, forge, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = _linked(forge, "ada")
    job_id = _ended_job_of(ada)
    _meet(monkeypatch, forget.web_sessions, "end_people")  # its first write, after its read
    _twice(app, forge, "root", f"/admin/users/{ada}/forget", "/admin")
    with session_scope() as session:
        assert session.get(User, ada) is None
        assert session.get(Job, job_id).task == "removed"  # type: ignore[union-attr]


def test_revoke_pressed_twice_at_once_revokes_once(
    app, forge, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = _linked(forge, "ada")
    with session_scope() as session:
        identity_id = session.scalars(select(Identity.id).where(Identity.user_id == ada)).one()
    _meet(monkeypatch, web_sessions, "end_everywhere")  # its first write, after its read
    _twice(app, forge, "root", f"/admin/links/{identity_id}/revoke", "/admin")
    with session_scope() as session:
        assert session.get(Identity, identity_id) is None and session.get(User, ada) is not None


def test_unlink_pressed_twice_at_once_unlinks_once(
    app, forge, backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    wendy = _linked(forge, "wendy")
    with session_scope() as session:
        identity_id = session.scalars(select(Identity.id).where(Identity.user_id == wendy)).one()
    _meet(monkeypatch, accounts, "forget_tokens")  # its first write, after its read
    _twice(app, forge, "wendy", f"/me/unlink/{identity_id}", "/me")
    with session_scope() as session:
        assert session.get(Identity, identity_id) is None
