"""A job's trigger as a typed value: one kind per trigger, stored with `kind` and `v`, and a
row of the older flat shape still reads."""

from __future__ import annotations

import json

import pytest

from resolver.contract.triggers import (
    BasePush,
    BasePushed,
    ChatThread,
    CiFailure,
    FailedCheck,
    ForgeIssue,
    Origin,
    PullRequest,
    Repository,
    ReviewBatch,
    ScheduleRun,
    SenderRef,
    TaskTrigger,
    TrackerTicket,
    TriggerError,
    dump_trigger,
    is_pull,
    number_of,
    read_trigger,
    repo_of,
)

INTAKE = {
    "provider": "github",
    "event": "issue_comment.created",
    "delivery": "d-1",
    "conversation_key": "github:o/r#7",
    "is_followup": False,
    "previous_job_id": None,
    "sender": {"id": "42", "login": "alice"},
}
GITHUB_ISSUE = {
    "repo": "o/r",
    "clone_url": "https://example.test/o/r.git",
    "default_branch": "main",
    "installation_id": 9,
    "number": 7,
    "is_pull_request": False,
    "title": "Fix it",
    "body": "please",
    "comment_kind": "issue_comment",
    "comment_id": 1001,
    "url": "https://example.test/o/r/issues/7#c",
    **INTAKE,
}
GITLAB_NOTE = {
    "repo": "g/p",
    "project_id": 5,
    "clone_url": "https://example.test/g/p.git",
    "default_branch": "main",
    "web_url": "https://example.test/g/p",
    "noteable_type": "merge_request",
    "iid": 3,
    "title": "MR",
    "body": "",
    "source_branch": "feature",
    "target_branch": "main",
    "note_id": 77,
    "note_type": "DiscussionNote",
    "discussion_id": "abc",
    "position": {"new_line": 4},
    "url": "https://example.test/g/p/-/merge_requests/3#note_77",
    "forge": {"provider": "gitlab", "repo": "g/p", "base": "main", "fixes": None},
}


def test_a_github_comment_on_an_issue_reads_as_a_forge_issue_with_github_in_its_part() -> None:
    trigger = read_trigger(GITHUB_ISSUE)
    assert isinstance(trigger, ForgeIssue)
    assert (repo_of(trigger), number_of(trigger), trigger.comment_id) == ("o/r", 7, 1001)
    assert trigger.repo == Repository(
        full_name="o/r", clone_url="https://example.test/o/r.git", default_branch="main"
    )
    assert trigger.origin.sender == SenderRef(id="42", login="alice")
    assert trigger.part == {"comment_kind": "issue_comment", "comment_id": 1001}
    assert trigger.reach == {"installation_id": 9}
    assert not is_pull(trigger)


def test_a_gitlab_note_on_a_merge_request_reads_as_a_pull_request_numbered_by_its_iid() -> None:
    trigger = read_trigger(GITLAB_NOTE)
    assert isinstance(trigger, PullRequest)
    assert (trigger.number, trigger.comment_id, trigger.head_ref) == (3, 77, "feature")
    assert trigger.planned is not None and trigger.planned.provider == "gitlab"
    assert trigger.part["noteable_type"] == "merge_request"
    assert trigger.part["position"] == {"new_line": 4}
    assert is_pull(trigger)


@pytest.mark.parametrize(
    ("old", "kind"),
    [
        (
            {**GITHUB_ISSUE, "is_pull_request": True, "review_batch": True, "review_id": 5},
            ReviewBatch,
        ),
        (
            {
                **GITHUB_ISSUE,
                "is_pull_request": True,
                "ci": {
                    "name": "t",
                    "head_sha": "a" * 40,
                    "branch": "resolver/x",
                    "conclusion": "failure",
                    "check_id": 8,
                },
            },
            CiFailure,
        ),
        (
            {
                "repo": "o/r",
                "clone_url": "u",
                "default_branch": "main",
                "installation_id": 9,
                "base_push": {"branch": "main", "sha": "b" * 40},
                **INTAKE,
            },
            BasePushed,
        ),
        (
            {
                "team_id": "T",
                "channel": "C",
                "thread_ts": "1.2",
                "ts": "1.3",
                "options": {"repo": "o/r", "branch": "dev"},
                "branch": "dev",
                **INTAKE,
            },
            ChatThread,
        ),
        ({"site": "https://j.test", "issue_key": "P-1", "issue_id": "10", **INTAKE}, TrackerTicket),
        (
            {"issue_id": "uuid", "organization_id": "org", "issue_identifier": "ENG-3"},
            TrackerTicket,
        ),
        (
            {
                "schedule_id": 4,
                "run_id": 2,
                "schedule": "deps",
                "forge_name": "github",
                "repo": "o/r",
                "title": "deps: update",
                "installation_id": 9,
            },
            ScheduleRun,
        ),
    ],
)
def test_every_older_shape_reads_as_its_kind_and_survives_a_round_trip(
    old: dict[str, object], kind: type[TaskTrigger]
) -> None:
    trigger = read_trigger(old)
    assert isinstance(trigger, kind)
    stored = json.loads(json.dumps(dump_trigger(trigger)))
    assert stored["kind"] == trigger.kind and stored["v"] == 1
    assert read_trigger(stored) == trigger


def test_the_typed_parts_of_older_rows_are_their_own_values() -> None:
    ci = read_trigger(
        {
            **GITHUB_ISSUE,
            "is_pull_request": True,
            "ci": {
                "name": "t",
                "head_sha": "a",
                "branch": "b",
                "conclusion": "failure",
                "check_id": 8,
            },
        }
    )
    assert isinstance(ci, CiFailure)
    assert ci.check == FailedCheck(
        name="t", head_sha="a", branch="b", conclusion="failure", check_id=8
    )
    push = read_trigger({"repo": "o/r", "base_push": {"branch": "main", "sha": "b"}})
    assert isinstance(push, BasePushed) and push.push == BasePush("main", "b")
    chat = read_trigger({"channel": "C", "options": {"branch": "dev"}})
    assert isinstance(chat, ChatThread) and chat.branch == "dev"


def test_a_new_value_is_stored_with_its_kind_and_version() -> None:
    trigger = PullRequest(
        repo=Repository(full_name="o/r"),
        number=2,
        part={"installation_id": 9},
        origin=Origin(provider="github", rerun_of=4),
    )
    stored = dump_trigger(trigger)
    assert (stored["kind"], stored["v"], stored["number"]) == ("pull_request", 1, 2)
    assert read_trigger(stored) == trigger


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "forge_issue", "v": 1},
        {"kind": "nonsense", "v": 1},
        {"kind": "pull_request", "v": 2, "repo": {"full_name": "o/r"}, "number": 1},
        {"schedule_id": "x"},
    ],
)
def test_a_stored_trigger_that_fits_no_kind_is_a_clear_error(bad: dict[str, object]) -> None:
    with pytest.raises(TriggerError, match="fits no kind"):
        read_trigger(bad)


def test_a_value_is_frozen() -> None:
    trigger = read_trigger(GITHUB_ISSUE)
    with pytest.raises(ValueError, match="frozen"):
        trigger.title = "other"  # type: ignore[misc]
