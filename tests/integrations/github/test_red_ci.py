"""GitHub: a red check on the bot's branch follows up the branch's job; green checks, other
branches and branches no job pushed answer 204 with nothing recorded."""

from __future__ import annotations

import copy
from typing import Any

from resolver.contract.triggers import CiFailure, read_trigger
from resolver.store import jobs
from resolver.store.db import session_scope
from tests.integrations.deliveries import github, load, post

CODERTOCAT = "21031067"
BRANCH = "resolver/7-fix-export"


def red(**changes: Any) -> dict[str, Any]:
    payload = copy.deepcopy(load("github", "check_run.completed__failure_on_bot_branch"))
    payload["check_run"].update(changes)
    return payload


def branch_job(store: Any) -> int:
    """The job that pushed the bot's branch, asked for by Codertocat (linked)."""
    store.link("github", CODERTOCAT, "Codertocat")
    with session_scope() as session:
        sender = {"id": CODERTOCAT, "login": "Codertocat"}
        job = jobs.create_job(
            session,
            jobs.NewJob(
                source="github",
                task="fix the export",
                repo="Codertocat/Hello-World",
                requester="Codertocat",
                trigger={"sender": sender},
            ),
        )
        job.branch, job.requester_id = BRANCH, job.requester_id or 1
        return job.id


def test_a_red_check_on_the_bots_branch_makes_a_quiet_job_for_its_requester(
    webhook_client: Any, store: Any
) -> None:
    first = branch_job(store)
    response = post(webhook_client, github("check_run.completed", red()))

    assert response.status_code == 202, response.text
    job = store.jobs()[-1]
    assert job.id != first and job.requester == "Codertocat"
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, CiFailure) and trigger.number == 7
    assert trigger.check.name == "test" and trigger.check.branch == BRANCH
    assert job.conversation_key == "github:Codertocat/Hello-World#7"
    assert "`test` failed" in job.task
    # Nothing is said until the worker has read the opt-in and the bound.
    assert [c for c in store.callbacks() if c.job_id == job.id] == []


def test_green_and_foreign_checks_answer_204_with_nothing_recorded(
    webhook_client: Any, store: Any
) -> None:
    branch_job(store)
    green = load("github", "check_run.completed__success")
    other = red()
    for entry in other["check_run"]["pull_requests"]:
        entry["head"]["ref"] = "feature/x"
    stale = red(head_sha="f" * 40)  # not the pull request's head
    for payload in (green, other, stale, red(conclusion="cancelled"), red(pull_requests=[])):
        assert post(webhook_client, github("check_run.completed", payload)).status_code == 204
    assert len(store.jobs()) == 1 and store.deliveries() == []


def test_a_red_check_on_a_branch_no_job_pushed_answers_204(webhook_client: Any, store: Any) -> None:
    store.link("github", CODERTOCAT, "Codertocat")
    response = post(webhook_client, github("check_run.completed", red()))
    assert response.status_code == 204
    assert store.jobs() == []


def test_timed_out_counts_as_red(webhook_client: Any, store: Any) -> None:
    branch_job(store)
    response = post(webhook_client, github("check_run.completed", red(conclusion="timed_out")))
    assert response.status_code == 202
