"""Each GitLab call against the stand-in: what is sent, and what GitLab ends up holding."""

from __future__ import annotations

from pathlib import Path

import pytest

from integrations.gitlab.client import GitLabClient, Note, NoteableKind
from integrations.gitlab.standin.api import GitLabAPI, Project
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import PullInfo, RepoInfo
from resolver.core.settings import Settings
from tests.integrations.gitlab.conftest import BOT, BOT_TOKEN, PROJECT, push_branch

BRANCH = "resolver/7-the-widget-breaks"


def test_project_by_path_or_id(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    expected = RepoInfo(
        full_name=PROJECT,
        clone_url=project.clone_url,
        default_branch="main",
        web_url=f"{gitlab_api.url}/{PROJECT}",
    )
    assert client.project(PROJECT) == expected
    assert client.project(project.id) == expected
    by_path, by_id = gitlab_api.requests
    assert by_path.path == "/projects/group%2Fwidgets"
    assert by_id.path == f"/projects/{project.id}"
    assert by_path.headers["private-token"] == BOT_TOKEN


def test_a_nested_group_path_is_encoded_whole(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    gitlab_api.add_project("org/team/tools", project.clone_url)
    assert client.project("org/team/tools").full_name == "org/team/tools"
    assert gitlab_api.requests[-1].path == "/projects/org%2Fteam%2Ftools"


def test_an_unknown_project_is_permanent(client: GitLabClient) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.project("group/absent")
    assert failed.value.status == 404
    assert str(failed.value) == "GitLab answered 404 to GET /projects/:id: 404 Project Not Found"


def test_the_current_user_is_the_one_the_token_acts_as(
    client: GitLabClient, settings: Settings, gitlab_api: GitLabAPI
) -> None:
    gitlab_api.add_token("glpat-alices-own-token", "alice")
    assert client.current_username() == BOT
    assert GitLabClient(settings, lambda: "glpat-alices-own-token").current_username() == "alice"
    sent = [(r.method, r.path, r.headers["private-token"]) for r in gitlab_api.requests]
    assert sent == [("GET", "/user", BOT_TOKEN), ("GET", "/user", "glpat-alices-own-token")]
    with pytest.raises(PermanentCallbackError) as failed:
        GitLabClient(settings, lambda: "glpat-unknown-token").current_username()
    assert str(failed.value) == "GitLab answered 401 to GET /user: 401 Unauthorized"


@pytest.mark.parametrize(
    ("name", "writes"), [("alice", True), ("bob", True), ("carol", False), ("dave", False)]
)
def test_developers_and_up_may_write(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project, name: str, writes: bool
) -> None:
    user_id = gitlab_api.add_user(name)
    assert client.can_write(PROJECT, user_id) is writes
    [call] = gitlab_api.requests
    assert call.path == f"/projects/group%2Fwidgets/members/all/{user_id}"


def test_write_access_to_a_project_out_of_sight_is_not_a_plain_no(
    client: GitLabClient, gitlab_api: GitLabAPI
) -> None:
    with pytest.raises(PermanentCallbackError, match="404 Project Not Found"):
        client.can_write("group/hidden", gitlab_api.add_user("alice"))


def test_a_note_on_an_issue_is_posted_then_edited(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    note_id = client.post_note(project.id, "issue", 7, "Queued")
    client.edit_note(project.id, "issue", 7, note_id, "**Done**: see !1")

    note = gitlab_api.notes[note_id]
    assert (note.kind, note.iid, note.body, note.type) == ("issues", 7, "**Done**: see !1", None)
    assert gitlab_api.users[note.author] == BOT
    post, put = gitlab_api.requests
    assert (post.method, post.path, post.body) == (
        "POST",
        f"/projects/{project.id}/issues/7/notes",
        {"body": "Queued"},
    )
    assert (put.method, put.path) == ("PUT", f"/projects/{project.id}/issues/7/notes/{note_id}")


def test_a_note_on_a_merge_request(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    merge_request = gitlab_api.add_merge_request(project, "feature")
    note_id = client.post_note(PROJECT, "merge_request", merge_request.iid, "Queued")
    client.edit_note(PROJECT, "merge_request", merge_request.iid, note_id, "Working")
    assert gitlab_api.notes[note_id].kind == "merge_requests"
    assert gitlab_api.notes[note_id].body == "Working"


def test_a_note_on_an_absent_issue_is_permanent(client: GitLabClient, project: Project) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.post_note(project.id, "issue", 99, "Queued")
    assert failed.value.status == 404


def test_another_users_note_cannot_be_edited(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    theirs = gitlab_api.add_note(project, "issues", 7, "mine", "alice")
    with pytest.raises(PermanentCallbackError) as failed:
        client.edit_note(project.id, "issue", 7, theirs.id, "rewritten")
    assert failed.value.status == 403
    assert theirs.body == "mine"


def test_a_reply_goes_into_the_diff_thread(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    merge_request = gitlab_api.add_merge_request(project, "feature")
    position = {"new_path": "widget.py", "new_line": 12, "old_path": "widget.py", "old_line": None}
    trigger = gitlab_api.add_note(
        project, "merge_requests", merge_request.iid, "@resolver simpler?", "alice",
        type="DiffNote", position=position,
    )  # fmt: skip
    thread = trigger.discussion_id

    reply_id = client.reply_in_discussion(
        PROJECT, "merge_request", merge_request.iid, thread, "On it"
    )
    client.edit_discussion_note(
        PROJECT, "merge_request", merge_request.iid, thread, reply_id, "Done"
    )

    reply = gitlab_api.notes[reply_id]
    assert (reply.discussion_id, reply.type, reply.body) == (thread, "DiffNote", "Done")
    post, put = gitlab_api.requests
    base = f"/projects/group%2Fwidgets/merge_requests/{merge_request.iid}/discussions/{thread}"
    assert (post.method, post.path) == ("POST", f"{base}/notes")
    assert (put.method, put.path) == ("PUT", f"{base}/notes/{reply_id}")


def test_a_reply_in_an_issue_thread(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    started = gitlab_api.add_note(project, "issues", 7, "a thread", "alice", type="DiscussionNote")
    reply_id = client.reply_in_discussion(project.id, "issue", 7, started.discussion_id, "Yes")
    assert gitlab_api.notes[reply_id].discussion_id == started.discussion_id
    assert gitlab_api.notes[reply_id].type == "DiscussionNote"


def test_a_reply_to_an_absent_thread_is_permanent(client: GitLabClient, project: Project) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.reply_in_discussion(project.id, "issue", 7, "0" * 40, "Yes")
    assert failed.value.status == 404


@pytest.mark.parametrize(
    ("kind", "plural"), [("issue", "issues"), ("merge_request", "merge_requests")]
)
def test_eyes_are_awarded_once_even_when_retried(
    client: GitLabClient,
    gitlab_api: GitLabAPI,
    project: Project,
    kind: NoteableKind,
    plural: str,
) -> None:
    iid = 7 if kind == "issue" else gitlab_api.add_merge_request(project, "feature").iid
    trigger = gitlab_api.add_note(project, plural, iid, "@resolver fix it", "alice")
    client.award_eyes(project.id, kind, iid, trigger.id)
    client.award_eyes(project.id, kind, iid, trigger.id)

    bot_id = gitlab_api.tokens[BOT_TOKEN]
    assert trigger.awards == [(bot_id, "eyes")]
    first, again = gitlab_api.requests
    assert first.path == f"/projects/{project.id}/{plural}/{iid}/notes/{trigger.id}/award_emoji"
    assert (first.body, first.status, again.status) == ({"name": "eyes"}, 201, 404)


def test_eyes_on_an_absent_note_are_permanent(client: GitLabClient, project: Project) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.award_eyes(project.id, "issue", 7, 424242)
    assert failed.value.status == 404


def test_notes_are_the_newest_page_oldest_first(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    for number in range(105):
        gitlab_api.add_note(project, "issues", 7, f"note {number}", "alice")
    gitlab_api.add_note(project, "issues", 7, "changed the title", "alice", system=True)

    notes = client.notes(project.id, "issue", 7)

    assert len(notes) == 100
    assert notes[0].body == "note 6"
    assert notes[-1] == Note(notes[-1].id, "alice", "changed the title", system=True)
    [call] = gitlab_api.requests
    assert call.query == {"sort": ["desc"], "order_by": ["created_at"], "per_page": ["100"]}


def test_diff_threads_with_their_place_in_the_diff(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    iid = gitlab_api.add_merge_request(project, "feature").iid
    gitlab_api.add_note(project, "merge_requests", iid, "overall fine", "alice")
    removed = {"old_path": "old.py", "new_path": "old.py", "old_line": 3, "new_line": None}
    first = gitlab_api.add_note(
        project, "merge_requests", iid, "why?", "bob", type="DiffNote", position=removed,
        resolved=True,
    )  # fmt: skip
    gitlab_api.add_note(
        project, "merge_requests", iid, "because", "alice", type="DiffNote", position=removed,
        discussion_id=first.discussion_id,
    )  # fmt: skip

    [thread] = client.diff_threads(project.id, iid)

    assert (thread.id, thread.path, thread.line, thread.resolved) == (
        first.discussion_id,
        "old.py",
        3,
        True,
    )
    assert [(n.author, n.body) for n in thread.notes] == [("bob", "why?"), ("alice", "because")]


def test_a_discussion_started_as_such_is_a_thread_without_a_place(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    iid = gitlab_api.add_merge_request(project, "feature").iid
    started = gitlab_api.add_note(
        project, "merge_requests", iid, "rename the module?", "bob", type="DiscussionNote"
    )
    [thread] = client.diff_threads(project.id, iid)
    assert (thread.id, thread.path, thread.line, thread.type) == (
        started.discussion_id,
        None,
        None,
        "DiscussionNote",
    )


def test_a_thread_is_resolved_and_resolving_again_is_no_change(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    iid = gitlab_api.add_merge_request(project, "feature").iid
    position = {"new_path": "a.py", "new_line": 1, "old_path": "a.py", "old_line": None}
    started = gitlab_api.add_note(
        project, "merge_requests", iid, "why?", "bob", type="DiffNote", position=position
    )
    thread = started.discussion_id
    client.resolve_discussion(PROJECT, iid, thread)
    client.resolve_discussion(PROJECT, iid, thread)

    assert started.resolved
    [resolved] = client.diff_threads(project.id, iid)
    assert resolved.resolved
    # By its route: under load a fourth request was once recorded here (not reproduced since).
    first, again = gitlab_api.calls(
        "PUT /projects/{id}/merge_requests/{iid}/discussions/{discussion_id}"
    )
    path = f"/projects/group%2Fwidgets/merge_requests/{iid}/discussions/{thread}"
    assert (first.method, first.path, first.body, first.status) == (
        "PUT",
        path,
        {"resolved": True},
        200,
    )
    assert again.status == 200


def test_resolving_an_absent_thread_is_permanent(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    iid = gitlab_api.add_merge_request(project, "feature").iid
    with pytest.raises(PermanentCallbackError) as failed:
        client.resolve_discussion(project.id, iid, "0" * 40)
    assert failed.value.status == 404 and gitlab_api.resolutions == []


def test_a_draft_merge_request_is_opened_once(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project, tmp_path: Path
) -> None:
    push_branch(project, BRANCH, tmp_path)
    assert client.find_open_merge_request(PROJECT, BRANCH) is None

    opened = client.open_draft_merge_request(PROJECT, BRANCH, "main", "Fix the widget", "Closes #7")
    again = client.open_draft_merge_request(PROJECT, BRANCH, "main", "Fix the widget", "Closes #7")

    url = f"{gitlab_api.url}/{PROJECT}/-/merge_requests/1"
    assert opened == again == PullInfo(1, url, BRANCH, "main", BOT)
    [merge_request] = gitlab_api.merge_requests
    assert (merge_request.title, merge_request.draft) == ("Draft: Fix the widget", True)
    assert merge_request.description == "Closes #7"
    statuses = [(r.method, r.status) for r in gitlab_api.requests if r.path.endswith("requests")]
    assert statuses == [("GET", 200), ("POST", 201), ("POST", 409), ("GET", 200)]
    assert client.find_open_merge_request(PROJECT, BRANCH) == opened
    assert client.get_merge_request(PROJECT, 1) == opened


def test_a_title_marked_draft_is_not_marked_twice(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project, tmp_path: Path
) -> None:
    push_branch(project, BRANCH, tmp_path)
    client.open_draft_merge_request(PROJECT, BRANCH, "main", "Draft: fix it", "")
    assert gitlab_api.merge_requests[0].title == "Draft: fix it"


def test_a_merge_requests_description_is_rewritten(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project, tmp_path: Path
) -> None:
    push_branch(project, BRANCH, tmp_path)
    opened = client.open_draft_merge_request(PROJECT, BRANCH, "main", "Fix the widget", "first")
    client.edit_merge_request_description(PROJECT, opened.number, "### Verification")
    [merge_request] = gitlab_api.merge_requests
    assert (merge_request.title, merge_request.description) == (
        "Draft: Fix the widget",
        "### Verification",
    )


def test_a_merge_request_from_a_missing_branch_is_permanent(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.open_draft_merge_request(PROJECT, "never-pushed", "main", "Fix", "")
    assert failed.value.status == 400
    assert str(failed.value).endswith(": source_branch does not exist")
    assert gitlab_api.merge_requests == []


def test_closed_merge_requests_are_not_reused(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project, tmp_path: Path
) -> None:
    push_branch(project, BRANCH, tmp_path)
    gitlab_api.add_merge_request(project, BRANCH, state="closed")
    opened = client.open_draft_merge_request(PROJECT, BRANCH, "main", "Fix", "")
    assert opened.number == 2
    assert client.find_open_merge_request(PROJECT, BRANCH) == opened


def test_an_absent_merge_request_is_permanent(client: GitLabClient, project: Project) -> None:
    with pytest.raises(PermanentCallbackError) as failed:
        client.get_merge_request(PROJECT, 5)
    assert failed.value.status == 404


def test_open_merge_requests_into_a_branch_are_read_page_after_page(
    client: GitLabClient, gitlab_api: GitLabAPI, project: Project
) -> None:
    mine = [gitlab_api.add_merge_request(project, f"resolver/{n}-x") for n in range(1, 131)]
    gitlab_api.add_merge_request(project, "resolver/900-y", target_branch="release")
    gitlab_api.add_merge_request(project, "resolver/901-z", state="merged")

    found = client.open_merge_requests(PROJECT, "main")

    assert [p.number for p in found] == [m.iid for m in reversed(mine)]
    assert found[0] == PullInfo(
        130,
        f"{gitlab_api.url}/{PROJECT}/-/merge_requests/130",
        "resolver/130-x",
        "main",
        "someone",
    )
    calls = [r for r in gitlab_api.requests if r.path.endswith("/merge_requests")]
    assert [r.query.get("page", ["1"])[0] for r in calls] == ["1", "2"]
    assert all(
        (r.query["state"], r.query["target_branch"], r.query["per_page"])
        == (["opened"], ["main"], ["100"])
        for r in calls
    )


def test_a_merge_request_from_a_fork_is_fetched_from_the_head_gitlab_keeps() -> None:
    from integrations.gitlab.client import _pull

    def merge_request(source: int) -> dict[str, object]:
        return {
            "iid": 7,
            "web_url": "https://h/-/merge_requests/7",
            "source_branch": "feature",
            "target_branch": "main",
            "source_project_id": source,
            "target_project_id": 3,
        }

    assert _pull(merge_request(3)).fetch_ref is None
    assert _pull(merge_request(9)).fetch_ref == "refs/merge-requests/7/head"
