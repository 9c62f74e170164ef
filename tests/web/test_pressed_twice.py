"""A button pressed twice (a double click, two tabs of one session, or again while the first
press's job runs) counts once: "Run again" makes one job and "Run now" one run, and the second
press lands on them. Once that job has ended, pressing again starts another. On SQLite and
PostgreSQL, through the app, with one session and one CSRF token."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from resolver.core.states import JobState, Outcome
from resolver.schedules import asked
from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Job
from resolver.web import actions
from tests.schedules.helpers import make_schedule, runs_of
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in
from tests.web.test_buttons import _failed_job_of_ada, _linked

# Long enough for the second press to reach its check while the first has not committed.
WIDENED = 0.5


def _tabs(app, forge, page: str) -> tuple[list[TestClient], str]:
    """Two tabs of wendy's one session (she may push, and has a Resolver user), and its token."""
    _linked(forge, "wendy")
    first = browser(app)
    sign_in(first, forge, "wendy")
    second = browser(app)
    second.cookies.update(first.cookies)
    return [first, second], csrf_of(first, page)


def _at_once(tabs: list[TestClient], path: str, token: str) -> list[str]:
    """Both tabs post `path` at the same moment; where each was sent."""
    start = threading.Barrier(len(tabs))

    def press(tab: TestClient) -> str:
        start.wait()
        answer = tab.post(path, data={"csrf": token})
        assert answer.status_code == 303, answer.text
        return answer.headers["location"]

    with ThreadPoolExecutor(len(tabs)) as pool:
        return list(pool.map(press, tabs))


def _slowed(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
    """Widen the window between a press's check and its write: `owner.name` waits first."""
    real: Callable[..., object] = getattr(owner, name)

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(WIDENED)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, slow)


def _reruns_of(job_id: int) -> list[int]:
    with session_scope() as session:
        return list(session.scalars(select(Job.id).where(Job.id != job_id).order_by(Job.id)))


def _end(job_id: int) -> None:
    with session_scope() as session:
        jobs.finish_job(session, jobs.get_job(session, job_id), JobState.FAILED, Outcome.ERROR)


@pytest.mark.parametrize("widened", [False, True], ids=["natural", "widened"])
def test_run_again_pressed_twice_at_once_makes_one_job(
    app, forge, backend, monkeypatch: pytest.MonkeyPatch, widened: bool
) -> None:
    job_id = _failed_job_of_ada(forge)
    tabs, token = _tabs(app, forge, f"/jobs/{job_id}")
    if widened:
        _slowed(monkeypatch, actions, "again")
    sent_to = _at_once(tabs, f"/jobs/{job_id}/rerun", token)
    [new_id] = _reruns_of(job_id)
    assert sent_to == [f"/jobs/{new_id}"] * 2
    pages = [tab.get(sent_to[0]).text for tab in tabs]
    assert any(f"You already ran job {job_id} again: job {new_id} is queued" in p for p in pages)


def test_run_again_while_the_new_job_runs_leads_to_it_and_after_it_ends_runs_again(
    app, forge
) -> None:
    job_id = _failed_job_of_ada(forge)
    [tab, _], token = _tabs(app, forge, f"/jobs/{job_id}")
    first = tab.post(f"/jobs/{job_id}/rerun", data={"csrf": token}).headers["location"]
    [new_id] = _reruns_of(job_id)
    again = tab.post(f"/jobs/{job_id}/rerun", data={"csrf": token})
    assert again.headers["location"] == first == f"/jobs/{new_id}"
    assert "Nothing new was started" in tab.get(first).text
    assert _reruns_of(job_id) == [new_id]

    _end(new_id)
    later = tab.post(f"/jobs/{job_id}/rerun", data={"csrf": token})
    [_, newer_id] = _reruns_of(job_id)
    assert later.headers["location"] == f"/jobs/{newer_id}"
    assert f"Running job {job_id}" in tab.get(later.headers["location"]).text


@pytest.mark.parametrize("widened", [False, True], ids=["natural", "widened"])
def test_run_now_pressed_twice_at_once_records_one_run(
    app, forge, backend, monkeypatch: pytest.MonkeyPatch, widened: bool
) -> None:
    schedule_id = make_schedule("weekly-tidy", SECRET_REPO)
    tabs, token = _tabs(app, forge, "/schedules")
    if widened:
        _slowed(monkeypatch, asked, "insert_run")
    _at_once(tabs, f"/schedules/{schedule_id}/run", token)
    [run] = runs_of(schedule_id)
    assert run.reason == "manual" and run.job_id is not None
    pages = [tab.get("/schedules").text for tab in tabs]
    assert any(f"You already asked for run {run.id} of weekly-tidy" in p for p in pages)


def test_run_now_while_its_run_is_not_over_leads_to_it_and_after_it_ends_runs_again(
    app, forge
) -> None:
    schedule_id = make_schedule("weekly-tidy", SECRET_REPO)
    [tab, _], token = _tabs(app, forge, "/schedules")
    tab.post(f"/schedules/{schedule_id}/run", data={"csrf": token})
    tab.post(f"/schedules/{schedule_id}/run", data={"csrf": token})
    [run] = runs_of(schedule_id)
    assert run.job_id is not None
    said = f"You already asked for run {run.id} of weekly-tidy, and it is job {run.job_id}"
    assert said in tab.get("/schedules").text

    _end(run.job_id)
    tab.post(f"/schedules/{schedule_id}/run", data={"csrf": token})
    assert [r.id for r in runs_of(schedule_id)][:1] == [run.id] and len(runs_of(schedule_id)) == 2
