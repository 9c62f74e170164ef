"""The GitLab stand-in's note, discussion and award emoji routes, in GitLab's shapes.

The same handlers serve issues and merge requests: the kind comes from the route.
https://docs.gitlab.com/api/notes/ https://docs.gitlab.com/api/discussions/
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from integrations.gitlab.standin.projects import find_merge_request
from integrations.gitlab.standin.state import (
    KINDS,
    Answer,
    Note,
    Project,
    Request,
    body_text,
    message,
    missing,
    now,
    paged,
)

if TYPE_CHECKING:
    from integrations.gitlab.standin.api import GitLabAPI


def _noteable(api: GitLabAPI, request: Request) -> tuple[Project | None, str, int]:
    """The project, the kind from the route (`issues`, `merge_requests`) and the iid, or a None
    project when either does not exist."""
    kind = request.route.split("/")[3]
    iid = int(request.params["iid"])
    project = api.project(request)
    if project is None:
        return None, kind, iid
    exists = (
        iid in project.issues
        if kind == "issues"
        else find_merge_request(api, project, iid) is not None
    )
    return (project if exists else None), kind, iid


def _note_json(api: GitLabAPI, note: Note) -> dict[str, Any]:
    resolvable = note.type is not None
    data = {
        "id": note.id,
        "type": note.type,
        "body": note.body,
        "attachment": None,
        "author": api.user_json(note.author),
        "created_at": now(),
        "updated_at": now(),
        "system": note.system,
        "noteable_id": note.iid + 500_000,
        "noteable_type": KINDS[note.kind],
        "noteable_iid": note.iid,
        "project_id": note.project_id,
        "resolvable": resolvable,
        "confidential": False,
        "internal": False,
    }
    if resolvable:
        data["resolved"] = note.resolved
    if note.position is not None:
        data["position"] = note.position
    return data


def _notes_of(api: GitLabAPI, project: Project, kind: str, iid: int) -> list[Note]:
    return [
        n for n in api.notes.values() if (n.project_id, n.kind, n.iid) == (project.id, kind, iid)
    ]


def list_notes(api: GitLabAPI, request: Request) -> Answer:
    project, kind, iid = _noteable(api, request)
    if project is None:
        return 404, message(404, "Not found")
    notes = sorted(_notes_of(api, project, kind, iid), key=lambda n: n.id)
    if request.query.get("sort", ["desc"])[0] == "desc":
        notes.reverse()
    return paged(request, [_note_json(api, n) for n in notes])


def create_note(api: GitLabAPI, request: Request) -> Answer:
    project, kind, iid = _noteable(api, request)
    if project is None:
        return 404, message(404, "Not found")
    body = body_text(request, "body")
    if body is None:
        return missing("body")
    note = Note(api.new_id(), project.id, kind, iid, body, request.user, secrets.token_hex(20))
    api.notes[note.id] = note
    return 201, _note_json(api, note)


def _note_here(api: GitLabAPI, request: Request) -> Note | None:
    """The note the path names, if it is on the issue or merge request the path names."""
    project, kind, iid = _noteable(api, request)
    note = api.notes.get(int(request.params["note_id"]))
    if project is None or note is None:
        return None
    return note if (note.project_id, note.kind, note.iid) == (project.id, kind, iid) else None


def _own_note(api: GitLabAPI, request: Request, discussion: str | None) -> Answer | Note:
    """The note a PUT is for, or the error answer: 404 when absent, 403 when not the author's."""
    note = _note_here(api, request)
    if note is None:
        return 404, message(404, "Note Not Found")
    if discussion is not None and note.discussion_id != discussion:
        return 404, message(404, "Note Not Found")
    if note.author != request.user:
        return 403, message(403, "Forbidden")
    return note


def update_note(api: GitLabAPI, request: Request) -> Answer:
    found = _own_note(api, request, request.params.get("discussion_id"))
    if not isinstance(found, Note):
        return found
    body = body_text(request, "body")
    if body is None:
        return 400, {"error": "body is empty"}
    found.body = body
    return 200, _note_json(api, found)


def _discussion_json(api: GitLabAPI, notes: list[Note]) -> dict[str, Any]:
    return {
        "id": notes[0].discussion_id,
        "individual_note": notes[0].type is None and len(notes) == 1,
        "notes": [_note_json(api, n) for n in notes],
    }


def list_discussions(api: GitLabAPI, request: Request) -> Answer:
    project, kind, iid = _noteable(api, request)
    if project is None:
        return 404, message(404, "Not found")
    threads: dict[str, list[Note]] = {}
    for note in sorted(_notes_of(api, project, kind, iid), key=lambda n: n.id):
        threads.setdefault(note.discussion_id, []).append(note)
    return paged(request, [_discussion_json(api, notes) for notes in threads.values()])


def create_discussion_note(api: GitLabAPI, request: Request) -> Answer:
    project, kind, iid = _noteable(api, request)
    discussion = request.params["discussion_id"]
    thread = [] if project is None else _notes_of(api, project, kind, iid)
    first = next(
        (n for n in sorted(thread, key=lambda n: n.id) if n.discussion_id == discussion), None
    )
    if project is None or first is None:
        return 404, message(404, "Discussion Not Found")
    body = body_text(request, "body")
    if body is None:
        return missing("body")
    note_type = "DiffNote" if first.type == "DiffNote" else "DiscussionNote"
    note = Note(
        api.new_id(),
        project.id,
        kind,
        iid,
        body,
        request.user,
        discussion,
        type=note_type,
        position=first.position,
    )
    api.notes[note.id] = note
    return 201, _note_json(api, note)


def award_emoji(api: GitLabAPI, request: Request) -> Answer:
    note = _note_here(api, request)
    if note is None:
        return 404, message(404, "Not found")
    name = body_text(request, "name")
    if name is None:
        return missing("name")
    if (request.user, name) in note.awards:
        return 404, message(404, "Award Emoji Name has already been taken Not Found")
    note.awards.append((request.user, name))
    return 201, {
        "id": api.new_id(),
        "name": name,
        "user": api.user_json(request.user),
        "created_at": now(),
        "updated_at": now(),
        "awardable_id": note.id,
        "awardable_type": "Note",
    }


def _resolved_param(request: Request) -> bool | None:
    """`resolved`, from the JSON body or the query string as Grape takes either; None when
    absent or not a boolean."""
    value = (request.body or {}).get("resolved")
    if value is None:
        value = next(iter(request.query.get("resolved") or []), None)
    if isinstance(value, bool):
        return value
    return {"true": True, "false": False}.get(str(value).lower()) if value is not None else None


def resolve_discussion(api: GitLabAPI, request: Request) -> Answer:
    """`PUT /projects/:id/merge_requests/:iid/discussions/:discussion_id` with `resolved`:
    every resolvable note of the thread takes the value; the discussion is the answer."""
    project, kind, iid = _noteable(api, request)
    discussion = request.params["discussion_id"]
    notes = [] if project is None else _notes_of(api, project, kind, iid)
    thread = sorted((n for n in notes if n.discussion_id == discussion), key=lambda n: n.id)
    if not thread:
        return 404, message(404, "Discussion Not Found")
    resolved = _resolved_param(request)
    if resolved is None:
        return missing("resolved")
    if thread[0].type is None:
        return 400, message(400, "Discussion is not resolvable")
    for note in thread:
        note.resolved = resolved
    api.resolutions.append((discussion, resolved, request.user))
    return 200, _discussion_json(api, thread)
