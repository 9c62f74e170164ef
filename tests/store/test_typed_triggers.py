"""Migration 0016 rewrites every job's trigger and notice's context of the older flat shape as
its typed value, in batches, on SQLite and PostgreSQL alike; a notice keeps its own entries,
a row that fits no kind stays as it was, and the downgrade gives the flat shape back."""

from __future__ import annotations

from typing import Any

from alembic import command
from sqlalchemy import insert, select

from resolver.contract.triggers import (
    ForgeIssue,
    PullRequest,
    ScheduleRun,
    TaskTrigger,
    number_of,
    read_trigger,
    repo_of,
)
from resolver.store.db import engine_for
from resolver.store.migrate import alembic_config, upgrade
from resolver.store.models import Job, Notice
from tests.store.test_user_names import empty_database  # noqa: F401 (a fixture)

SENDER = {"id": "42", "login": "alice"}
GITHUB = {
    "repo": "octo/widgets",
    "clone_url": "https://forge.test/octo/widgets.git",
    "default_branch": "main",
    "installation_id": 9,
    "number": 7,
    "is_pull_request": False,
    "title": "Fix it",
    "body": "please",
    "comment_kind": "issue_comment",
    "comment_id": 1001,
    "url": "https://forge.test/octo/widgets/issues/7#c",
    "provider": "github",
    "event": "issue_comment.created",
    "delivery": "d-1",
    "conversation_key": "github:octo/widgets#7",
    "is_followup": False,
    "previous_job_id": None,
    "sender": SENDER,
    "forge": {"provider": "github", "repo": "octo/widgets", "base": "main", "fixes": 7},
}
GITLAB = {
    "repo": "group/project",
    "project_id": 5,
    "clone_url": "https://forge.test/group/project.git",
    "default_branch": "main",
    "noteable_type": "merge_request",
    "iid": 3,
    "title": "MR",
    "body": "",
    "source_branch": "feature",
    "target_branch": "main",
    "note_id": 77,
    "note_type": "DiscussionNote",
    "discussion_id": "abc",
    "provider": "gitlab",
    "sender": {"id": "1", "login": "root"},
}
SCHEDULE = {
    "schedule_id": 4,
    "run_id": 2,
    "schedule": "deps",
    "forge_name": "github",
    "repo": "o/r",
}
UNREADABLE = {"schedule_id": "not a number"}
NOTICE = {
    "team_id": "T1",
    "channel": "C1",
    "thread_ts": "1.2",
    "options": {},
    "provider": "slack",
    "sender": {"id": "T1:U1", "login": "bob"},
    "request": {"task": "fix it", "repo": None},
    "private": {"to": "T1:U1", "text": "your link", "fallback": None},
}
MANY = 1_100  # more rows than one batch of the migration (500)


def test_old_rows_are_rewritten_as_typed_values_and_back(empty_database: str) -> None:  # noqa: F811
    url = empty_database
    upgrade(url, "0015")
    olds = [GITHUB, GITLAB, SCHEDULE, UNREADABLE] + [
        {**GITHUB, "number": n, "comment_id": n} for n in range(MANY)
    ]
    with engine_for(url).begin() as conn:
        for old in olds:
            conn.execute(insert(Job.__table__).values(source="github", task="t", trigger=old))
        conn.execute(insert(Notice.__table__).values(_notice(NOTICE)))

    upgrade(url)
    triggers, [notice] = _rows(url)
    assert all(t["kind"] and t["v"] == 1 for t in triggers[:3] + triggers[4:])
    assert [read_trigger(t) for t in triggers[:3]] == [read_trigger(o) for o in olds[:3]]
    github, gitlab, schedule = (read_trigger(t) for t in triggers[:3])
    assert isinstance(github, ForgeIssue) and github.reach == {"installation_id": 9}
    assert github.origin.sender is not None and github.origin.sender.login == "alice"
    assert isinstance(gitlab, PullRequest) and (gitlab.number, gitlab.comment_id) == (3, 77)
    assert isinstance(schedule, ScheduleRun) and schedule.schedule_id == 4
    assert triggers[3] == UNREADABLE  # left as it was: reading it names it
    assert [read_trigger(t).number for t in triggers[4:]] == list(range(MANY))  # type: ignore[union-attr]
    assert notice["request"] == NOTICE["request"] and notice["private"] == NOTICE["private"]
    chat = read_trigger(notice)
    assert chat.kind == "chat_thread" and chat.reach == {"team_id": "T1"}
    assert "request" not in chat.part and "private" not in chat.part

    command.downgrade(alembic_config(url), "0015")
    flats, [notice] = _rows(url)
    assert flats[0]["installation_id"] == 9 and flats[0]["number"] == 7
    assert flats[0]["is_pull_request"] is False and flats[0]["sender"] == SENDER
    assert (flats[1]["iid"], flats[1]["noteable_type"], flats[1]["project_id"]) == (
        3,
        "merge_request",
        5,
    )
    again = [read_trigger(f) for f in flats[:3]]
    assert [_essentials(t) for t in again] == [_essentials(t) for t in (github, gitlab, schedule)]
    assert notice["private"] == NOTICE["private"] and notice["channel"] == "C1"


def _essentials(trigger: TaskTrigger) -> tuple[object, ...]:
    number, repo = number_of(trigger), repo_of(trigger)
    return (trigger.kind, repo, number, trigger.reach, trigger.origin, trigger.planned)


def _notice(context: dict[str, Any]) -> dict[str, Any]:
    return {
        "provider": "slack",
        "kind": "unlinked",
        "dedup_key": "unlinked:T1:U1:k",
        "conversation_key": "slack:T1:C1:1.2",
        "body": "Link your account first.",
        "context": context,
    }


def _rows(url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with engine_for(url).connect() as conn:
        jobs = conn.execute(select(Job.__table__.c.trigger).order_by(Job.__table__.c.id))
        notices = conn.execute(select(Notice.__table__.c.context))
        return [row[0] for row in jobs], [row[0] for row in notices]
