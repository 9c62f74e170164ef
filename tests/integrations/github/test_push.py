"""GitHub: a push to the default branch makes one quiet job for the bot's branches (the
worker reads `conflicts: fix`); any other push answers 204 with nothing recorded, before any
call to GitHub."""

from __future__ import annotations

import copy
from typing import Any

from resolver.contract.triggers import BasePush, BasePushed, read_trigger
from tests.integrations.deliveries import github, load, post
from tests.integrations.github.test_red_ci import branch_job

AFTER = "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"


def pushed(ref: str = "refs/heads/master", **changes: Any) -> dict[str, Any]:
    """The recorded push, moved onto a branch (it was a tag's deletion)."""
    payload = copy.deepcopy(load("github", "push__branch"))
    payload.update({"ref": ref, "after": AFTER, "deleted": False, "created": False, **changes})
    return payload


def test_a_push_to_the_default_branch_makes_a_quiet_job_for_a_bot_branchs_requester(
    webhook_client: Any, store: Any
) -> None:
    first = branch_job(store)
    response = post(webhook_client, github("push", pushed()))

    assert response.status_code == 202, response.text
    job = store.jobs()[-1]
    assert job.id != first and job.requester == "Codertocat"
    trigger = read_trigger(job.trigger)
    assert isinstance(trigger, BasePushed)
    assert trigger.push == BasePush("master", AFTER, config_touched=False)
    assert job.conversation_key == "github:Codertocat/Hello-World@master"
    # Nothing is said: the worker reads the opt-in first, and a push has no conversation.
    assert [c for c in store.callbacks() if c.job_id == job.id] == []


def test_other_pushes_answer_204_with_nothing_recorded(webhook_client: Any, store: Any) -> None:
    branch_job(store)
    tag = load("github", "push__branch")  # a tag, deleted
    others = (
        tag,
        pushed("refs/heads/feature/x"),
        pushed("refs/heads/resolver/7-fix-export"),
        pushed("refs/tags/master"),
        pushed(deleted=True),
    )
    for payload in others:
        assert post(webhook_client, github("push", payload)).status_code == 204
    assert len(store.jobs()) == 1 and store.deliveries() == []


def test_a_push_where_no_job_made_a_bot_branch_answers_204(webhook_client: Any, store: Any) -> None:
    store.link("github", "21031067", "Codertocat")
    assert post(webhook_client, github("push", pushed())).status_code == 204
    assert store.jobs() == []


def test_a_malformed_push_is_400(webhook_client: Any, store: Any) -> None:
    payload = pushed()
    del payload["after"]
    assert post(webhook_client, github("push", payload)).status_code == 400
    assert store.jobs() == []
