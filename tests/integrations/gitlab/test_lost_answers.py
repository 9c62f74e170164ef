"""A note whose answer was lost is found by its hidden tag and edited, not posted twice: as the
bot, or as the requester when GitLab acts with their own token."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from integrations import registry
from integrations.gitlab.standin.api import GitLabAPI, Project
from resolver.contract.errors import TransientCallbackError
from resolver.contract.outbound import hidden_tag
from resolver.contract.triggers import comment_of, is_pull, number_of, read_trigger
from resolver.core.settings import Settings, get_settings
from tests.integrations.gitlab.conftest import (
    BOT_TOKEN,
    THREAD,
    USER_TOKEN,
    store_bot_token,
    store_user_token,
    trigger_of,
)

ISSUE_NOTES = "POST /projects/{id}/issues/{iid}/notes"
# The fixture of a trigger, and the route its answer is posted to.
POSTED_TO = pytest.mark.parametrize(
    ("fixture", "route"),
    [
        ("Note_Hook__on_issue", ISSUE_NOTES),
        (
            "Note_Hook__diff_note_on_merge_request",
            "POST /projects/{id}/merge_requests/{iid}/discussions/{discussion_id}/notes",
        ),
    ],
)


def add_trigger_note(api: GitLabAPI, project: Project, context: dict[str, Any]) -> str:
    """root's triggering note, where the context says it is; returns the noteable's plural."""
    trigger = read_trigger(context)
    plural = "merge_requests" if is_pull(trigger) else "issues"
    api.add_note(
        project, plural, iid_of(context), "@resolver please fix", "root",
        id=comment_of(trigger), discussion_id=trigger.part.get("discussion_id") or "d0",
    )  # fmt: skip
    return plural


@POSTED_TO
def test_a_note_whose_answer_was_lost_is_found_by_its_hidden_tag(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project, fixture: str, route: str
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    context = trigger_of(fixture, "@resolver please fix")
    plural = add_trigger_note(gitlab_api, recorded, context)
    tagged = hidden_tag("status-12")
    gitlab_api.add_note(recorded, plural, iid_of(context), tagged, "root")
    conversation = registry.conversation("gitlab", read_trigger(context), None, get_settings())
    since = datetime.now(UTC)
    assert conversation.find("status-12", since) is None  # root's note, not the bot's

    gitlab_api.fail(route, 502, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", tag="status-12")
    ref = conversation.find("status-12", since)
    assert ref is not None
    for other in ("status-1", "status-120", "notice-12"):
        assert conversation.find(other, since) is None
    conversation.edit(ref, "Done")

    bot = gitlab_api.tokens[BOT_TOKEN]
    mine = [n for n in gitlab_api.notes.values() if n.author == bot]
    assert [(n.id, n.body) for n in mine] == [(ref["note_id"], f"Done\n{tagged}")]
    thread = THREAD if plural == "merge_requests" else None
    kind = "merge_request" if plural == "merge_requests" else "issue"
    assert ref == {
        "kind": kind,
        "iid": iid_of(context),
        "note_id": mine[0].id,
        "discussion_id": thread,
        "tag": "status-12",
    }


@POSTED_TO
def test_a_note_posted_with_the_requesters_token_is_found_after_a_lost_answer(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project, fixture: str, route: str
) -> None:
    gitlab_api.add_token(USER_TOKEN, "root")
    requester = store_user_token(gitlab_env, "root", USER_TOKEN)
    context = trigger_of(fixture, "@resolver please fix")
    plural = add_trigger_note(gitlab_api, recorded, context)
    tagged = hidden_tag("status-12")
    theirs = gitlab_api.add_note(recorded, plural, iid_of(context), f"Hi\n{tagged}", "alice")
    conversation = registry.conversation("gitlab", read_trigger(context), requester, get_settings())
    since = datetime.now(UTC)
    assert conversation.find("status-12", since) is None  # alice's note, not ours

    gitlab_api.fail(route, 502, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", tag="status-12")
    ref = conversation.find("status-12", since)
    assert ref is not None
    assert conversation.find("status-1", since) is None  # no note carries it: no one is asked
    conversation.edit(ref, "Done")

    root = gitlab_api.tokens[USER_TOKEN]
    ours = [n for n in gitlab_api.notes.values() if tagged in n.body and n.id != theirs.id]
    assert [(n.id, n.author, n.body) for n in ours] == [(ref["note_id"], root, f"Done\n{tagged}")]
    assert theirs.body == f"Hi\n{tagged}"
    asked = [r.headers["private-token"] for r in gitlab_api.requests if r.path == "/user"]
    assert asked == [USER_TOKEN, USER_TOKEN]  # once per find that met someone else's tag


def test_the_bot_finding_its_own_note_asks_no_one_who_it_is(
    gitlab_env: Settings, gitlab_api: GitLabAPI, recorded: Project
) -> None:
    store_bot_token(gitlab_env, BOT_TOKEN)
    context = trigger_of("Note_Hook__on_issue", "@resolver please fix")
    add_trigger_note(gitlab_api, recorded, context)
    conversation = registry.conversation("gitlab", read_trigger(context), None, get_settings())
    since = datetime.now(UTC)
    assert conversation.find("status-12", since) is None

    gitlab_api.fail(ISSUE_NOTES, 502, applied=True)
    with pytest.raises(TransientCallbackError):
        conversation.post("Queued", tag="status-12")
    ref = conversation.find("status-12", since)

    assert ref is not None
    assert gitlab_api.notes[ref["note_id"]].author == gitlab_api.tokens[BOT_TOKEN]
    assert "/user" not in [r.path for r in gitlab_api.requests]


def iid_of(context: dict[str, Any]) -> int:
    iid = number_of(read_trigger(context))
    assert iid is not None
    return iid
