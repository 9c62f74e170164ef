"""The job page: the request, its trajectory step by step (commands and output, edits as
diffs, the final change), cost and time, all from the redacted record, and live updates."""

from __future__ import annotations

import json

from resolver.contract.callbacks import ThreadReply
from resolver.core.redact import Redactor
from resolver.core.states import JobState, Outcome
from resolver.store import jobs
from resolver.store.callbacks import finish, record_callback
from resolver.store.db import session_scope
from tests.store.test_storage import new_job
from tests.web.conftest import SECRET_REPO, browser, sign_in

PLANTED = "ghp_" + "A1b2C3d4E5" * 4  # a token shape the record must never show
OPERATOR_SECRET = "the-llm-key-9f8e7d6c5b4a"


def _trajectory(job_id: int, finished: bool = True) -> None:
    steps = [
        (
            "action",
            {
                "step": 1,
                "call_id": "c1",
                "tool": "execute_bash",
                "arguments": json.dumps({"command": f"echo {PLANTED}"}),
            },
        ),
        (
            "observation",
            {
                "step": 1,
                "call_id": "c1",
                "tool": "execute_bash",
                "content": f"{PLANTED}\n" + "line\n" * 40,
                "error": False,
            },
        ),
        (
            "action",
            {
                "step": 2,
                "call_id": "c2",
                "tool": "str_replace_editor",
                "arguments": json.dumps(
                    {
                        "command": "str_replace",
                        "path": "app.py",
                        "old_str": "x = 1",
                        "new_str": "x = 2",
                    }
                ),
            },
        ),
        (
            "observation",
            {
                "step": 2,
                "call_id": "c2",
                "tool": "str_replace_editor",
                "content": "edited",
                "error": False,
            },
        ),
        ("diff", {"diff": "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"}),
    ]
    if finished:
        steps.append(("finish", {"outcome": "changed_code", "summary": "Changed x."}))
    with session_scope() as session:
        redactor = Redactor([OPERATOR_SECRET])
        for kind, payload in steps:
            jobs.append_event(session, job_id, kind, payload, redactor)
        job = jobs.get_job(session, job_id)
        jobs.transition(job, JobState.RUNNING)
        job.cost_usd, job.prompt_tokens, job.completion_tokens = 0.4213, 1200, 300
        if finished:
            jobs.finish_job(
                session,
                job,
                JobState.SUCCEEDED,
                Outcome.CHANGED_CODE,
                result={"summary": "Changed x."},
            )
            job.branch, job.pr_url = "resolver/fix-x", "https://github.example/octo/secret/pull/9"


def test_the_page_shows_what_the_agent_did(app, forge) -> None:
    job_id = new_job(
        repo=SECRET_REPO,
        task="set x to 2",
        trigger={"url": "https://github.example/octo/secret/issues/4#c1"},
    )
    _trajectory(job_id)
    client = browser(app)
    sign_in(client, forge, "rita")
    page = client.get(f"/jobs/{job_id}").text
    assert "set x to 2" in page and 'href="https://github.example/octo/secret/issues/4#c1"' in page
    assert "$ echo ******" in page
    assert "<details><summary>42 lines</summary>" in page, "long output starts collapsed"
    assert '<span class="del">-x = 1</span>' in page and '<span class="add">+x = 2</span>' in page
    assert "The change" in page and "resolver/fix-x" in page
    assert "$0.42" in page and "1500 tokens" in page and "2 steps" in page
    assert "Changed x." in page
    assert PLANTED not in page


def test_nothing_bypasses_redaction(app, forge) -> None:
    """A secret the process knows is masked on the way out even if a record held it."""
    from resolver.core.logs import register_secret

    job_id = new_job(repo=SECRET_REPO, task=f"use {OPERATOR_SECRET} please")
    register_secret(OPERATOR_SECRET)
    client = browser(app)
    sign_in(client, forge, "root")
    page = client.get(f"/jobs/{job_id}").text
    assert OPERATOR_SECRET not in page and "use ****** please" in page
    assert OPERATOR_SECRET not in client.get("/jobs").text


def test_a_failed_job_says_why_in_words(app, forge) -> None:
    job_id = new_job(repo=SECRET_REPO)
    with session_scope() as session:
        job = jobs.get_job(session, job_id)
        jobs.transition(job, JobState.RUNNING)
        jobs.finish_job(
            session,
            job,
            JobState.FAILED,
            Outcome.COULD_NOT,
            error="The tests need a database I cannot reach.",
        )
    client = browser(app)
    sign_in(client, forge, "root")
    page = client.get(f"/jobs/{job_id}").text
    assert "The agent could not finish the task" in page
    assert "The tests need a database I cannot reach." in page
    assert ">Run again<" in page


def test_a_result_that_does_not_read_is_named_on_the_page_and_the_rest_still_shows(
    app, forge
) -> None:
    """A stored result whose summary is no text: the page says which field, never its value,
    instead of failing whole."""
    job_id = new_job(repo=SECRET_REPO, task="set x to 2")
    with session_scope() as session:
        jobs.get_job(session, job_id).result = {"summary": {"said": PLANTED}, "steering": "x"}
    client = browser(app)
    sign_in(client, forge, "rita")
    answer = client.get(f"/jobs/{job_id}")
    assert answer.status_code == 200
    assert "set x to 2" in answer.text and "Its recorded result does not read" in answer.text
    assert "summary: Input should be a valid string" in answer.text
    assert PLANTED not in answer.text


def test_events_stream_the_trajectory_and_end_with_the_job(app, forge) -> None:
    job_id = new_job(repo=SECRET_REPO)
    _trajectory(job_id)
    client = browser(app)
    sign_in(client, forge, "rita")
    with client.stream("GET", f"/jobs/{job_id}/events?after=2") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        body = "".join(stream.iter_text())
    assert "id: 1\n" not in body and "id: 3\n" in body, "it resumes after the given entry"
    assert "event: block" in body and "event: head" in body
    assert "event: end" in body
    with client.stream("GET", f"/jobs/{job_id}/events", headers={"Last-Event-ID": "5"}) as again:
        resumed = "".join(again.iter_text())
    assert "id: 6\n" in resumed and "id: 5\n" not in resumed


def test_the_list_filters_and_pages(app, forge) -> None:
    ids = [new_job(repo=SECRET_REPO, task=f"task {n}") for n in range(55)]
    other = new_job(repo="octo/elsewhere", task="elsewhere", source="cli")
    client = browser(app)
    sign_in(client, forge, "root")
    first = client.get("/jobs").text
    assert f'href="/jobs/{other}"' in first and f'href="/jobs/{ids[5]}"' not in first
    older = first[first.index('href="/jobs?before=') :].split('"')[1].replace("&amp;", "&")
    second = client.get(older).text
    assert f'href="/jobs/{ids[0]}"' in second and "Newest" in second
    filtered = client.get("/jobs", params={"source": "cli"}).text
    assert f'href="/jobs/{other}"' in filtered and f'href="/jobs/{ids[-1]}"' not in filtered
    assert "No jobs you can see match" in client.get("/jobs", params={"state": "failed"}).text


def test_a_thread_left_unresolved_is_named_in_the_history(app, forge) -> None:
    job_id = new_job(repo=SECRET_REPO)
    with session_scope() as session:
        reply = ThreadReply(job_id=job_id, text="Done.")
        sent = record_callback(session, "github", reply, job_id).id
        failed = record_callback(session, "github", reply, job_id).id
    reason = "replied in the thread, but could not resolve it: FORBIDDEN: not allowed"
    with session_scope() as session:
        finish(session, sent, "sent")
        finish(session, failed, "failed", error=reason)
    client = browser(app)
    sign_in(client, forge, "root")
    page = client.get(f"/jobs/{job_id}").text
    assert page.count("review thread: ") == 1 and f"review thread: {reason}" in page
