"""The web app's surface, as an attacker meets it: headers that keep its pages out of frames and
its scripts its own, stored URLs that link only to the web, forms with a size cap, ids that are
ids, logs that never name a token, and a JSON API that shows no more than the page."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import select

from resolver.store import jobs
from resolver.store.db import session_scope
from resolver.store.models import Job, Schedule
from tests.store.test_storage import new_job
from tests.web.conftest import SECRET_REPO, browser, csrf_of, sign_in


def _finished(pr_url: str, url: str) -> int:
    job_id = new_job(repo=SECRET_REPO, trigger={"url": url})
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        job.state, job.outcome, job.pr_url = "succeeded", "answered", pr_url
    return job_id


def test_only_web_urls_are_rendered_as_links(app, forge) -> None:
    hostile = _finished("javascript:alert(1)", "JaVaScRiPt:alert(2)")
    tabbed = _finished("java\tscript:alert(3)", " javascript:alert(4)")
    fine = _finished(
        "https://github.com/octo/secret/pull/7", "https://github.com/octo/secret/issues/1"
    )
    client = browser(app)
    sign_in(client, forge, "root")
    pages = [client.get("/jobs").text] + [client.get(f"/jobs/{i}").text for i in (hostile, tabbed)]
    for text in pages:
        assert "script:alert" not in text.lower().replace("\t", "")
    shown = client.get(f"/jobs/{hostile}").text
    assert "where it was asked" in shown and "pull request" in shown  # as text
    good = client.get(f"/jobs/{fine}").text
    assert 'href="https://github.com/octo/secret/pull/7"' in good
    assert 'href="https://github.com/octo/secret/issues/1"' in good


def _state(job_id: int) -> str:
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job.state


ODD_IDS = ["%C2%B2", "²", "9999999999999999999999999", "1e3", "-1", "0x10", "12%0A", "%EF%BC%91"]


@pytest.mark.parametrize("odd", ODD_IDS)
def test_an_odd_id_is_not_found(app, forge, odd) -> None:
    client = browser(app)
    sign_in(client, forge, "root")
    csrf = csrf_of(client, "/jobs")
    for path in (f"/jobs/{odd}", f"/jobs/{odd}/events", f"/api/jobs/{odd}"):
        assert client.get(path).status_code == 404, path
    for path in (
        f"/jobs/{odd}/stop",
        f"/jobs/{odd}/rerun",
        f"/schedules/{odd}/run",
        f"/admin/links/{odd}/revoke",
        f"/me/unlink/{odd}",
    ):
        assert client.post(path, data={"csrf": csrf}).status_code == 404, path
    assert client.get("/jobs", params={"before": odd}).status_code == 400
    assert client.get("/api/jobs", params={"limit": odd}).status_code == 400
    with session_scope() as session:
        assert session.scalars(select(Job)).all() == []
        assert session.scalars(select(Schedule)).all() == []


def test_a_refused_post_logs_the_route_and_not_the_token(app, forge, caplog) -> None:
    caplog.set_level(logging.INFO)
    token = "v1.private-link-token-ABCDEFGH"
    client = browser(app)
    sign_in(client, forge, "nick")
    assert client.post(f"/link/{token}", data={"csrf": "wrong"}).status_code == 403
    ours = [record for record in caplog.records if record.name.startswith("resolver.")]
    logged = "".join(f"{record.getMessage()} {vars(record)}" for record in ours)
    assert "web.csrf_refused" in logged
    assert token not in logged
    assert "/link/{token}" in logged


def test_the_api_shows_what_the_page_shows(app, forge) -> None:
    from resolver.core.logs import register_secret
    from resolver.core.redact import Redactor

    known = "the-operators-llm-key-5e6f7a8b"
    job_id = new_job(repo=SECRET_REPO)
    with session_scope() as session:
        prompt = {"system": "You are the resolver. SYSTEM-PROMPT-WORDS", "task": "fix it"}
        jobs.append_event(session, job_id, "task", prompt, Redactor())
        said = {"step": 1, "content": f"I used {known} to call the model"}
        jobs.append_event(session, job_id, "message", said, Redactor())
    register_secret(known)
    client = browser(app)
    sign_in(client, forge, "rita")
    page = client.get(f"/jobs/{job_id}").text
    api = client.get(f"/api/jobs/{job_id}")
    assert api.status_code == 200
    kinds = [event["kind"] for event in api.json()["trajectory"]]
    assert kinds == ["message"]
    for shown in (page, api.text):
        assert "SYSTEM-PROMPT-WORDS" not in shown
        assert known not in shown
        assert "to call the model" in shown
