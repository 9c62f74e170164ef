"""GitLab: a Push Hook to the project's default branch makes one quiet job for the bot's
branches (the worker reads `conflicts: fix`); any other push (a branch, a deletion) answers 204
with nothing recorded, before any call to GitLab."""

from __future__ import annotations

import copy
from typing import Any

from resolver.contract.triggers import BasePush, BasePushed, read_trigger
from resolver.store import jobs
from resolver.store.db import session_scope
from tests.integrations.deliveries import gitlab, load, post

AFTER = "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"
REPO = "mike/diaspora"  # what the recorded push names: project 15, default branch master


def pushed(ref: str = "refs/heads/master", **changes: Any) -> dict[str, Any]:
    payload = copy.deepcopy(load("gitlab", "Push_Hook__branch"))
    payload.update({"ref": ref, "after": AFTER, **changes})
    return payload


def bot_branch_job(store: Any) -> int:
    """A job of root's that made one of the bot's branches of the pushed project."""
    store.link("gitlab", "1", "root")
    with session_scope() as session:
        job = jobs.create_job(
            session,
            jobs.NewJob(
                source="gitlab",
                task="fix the export",
                repo=REPO,
                requester="root",
                trigger={"sender": {"id": "1", "login": "root"}},
            ),
        )
        job.branch, job.requester_id = "resolver/1-fix-export", 1
        session.flush()
        return job.id


def test_a_push_to_the_default_branch_makes_a_quiet_job_for_a_bot_branchs_requester(
    webhook_client: Any, store: Any
) -> None:
    first = bot_branch_job(store)
    response = post(webhook_client, gitlab("Push Hook", pushed()))

    assert response.status_code == 202, response.text
    job = store.jobs()[-1]
    assert job.id != first and job.requester == "root"  # not jsmith, who pushed
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, BasePushed) and trigger.push == BasePush("master", AFTER)
    assert trigger.reach["project_id"] == 15 and job.repo == REPO
    assert job.conversation_key == f"gitlab:{REPO}@master"
    # Nothing is said: the worker reads the opt-in first, and a push has no conversation.
    assert [c for c in store.callbacks() if c.job_id == job.id] == []


def test_other_pushes_answer_204_with_nothing_recorded(webhook_client: Any, store: Any) -> None:
    bot_branch_job(store)
    others = (
        pushed("refs/heads/feature/x"),
        pushed("refs/heads/resolver/1-fix-export"),
        pushed("refs/tags/master"),
        pushed(after="0" * 40),  # the default branch deleted
    )
    for payload in others:
        assert post(webhook_client, gitlab("Push Hook", payload)).status_code == 204
    assert len(store.jobs()) == 1 and store.deliveries() == []


def test_a_push_where_no_job_made_a_bot_branch_answers_204(webhook_client: Any, store: Any) -> None:
    store.link("gitlab", "1", "root")
    assert post(webhook_client, gitlab("Push Hook", pushed())).status_code == 204
    assert store.jobs() == []


def test_a_malformed_push_is_400(webhook_client: Any, store: Any) -> None:
    payload = pushed()
    del payload["after"]
    assert post(webhook_client, gitlab("Push Hook", payload)).status_code == 400
    assert store.jobs() == []
