"""Threads on a merge request's diff, as GitLab answers them: a position on the diff refs and a
line the diff shows, else 400. https://docs.gitlab.com/api/discussions/

The stand-in computes the diff itself from the bare repository (`target...source`), and checks
the position's head, the merge base and each line against it, as GitLab refuses a note whose
line code it cannot resolve.
"""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from integrations.gitlab.standin.notes import _discussion_json
from integrations.gitlab.standin.projects import find_merge_request
from integrations.gitlab.standin.state import (
    Answer,
    MergeRequest,
    Note,
    Request,
    body_text,
    message,
    missing,
)
from resolver.contract.review import diff_files

if TYPE_CHECKING:
    from integrations.gitlab.standin.api import GitLabAPI


def _git(bare: Path, *args: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(bare), *args], capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def _invalid(text: str) -> Answer:
    return 400, {"message": f'400 Bad request - Note {{:line_code=>["{text}"]}}'}


def _position_problem(
    bare: Path, merge_request: MergeRequest, position: dict[str, Any]
) -> str | None:
    source, target = merge_request.source_branch, merge_request.target_branch
    # A fork's source branch is not in the project: GitLab keeps its head there, as it does
    # every merge request's.
    kept = f"refs/merge-requests/{merge_request.iid}/head"
    ref = kept if merge_request.source_project_id is not None else f"refs/heads/{source}"
    head = (_git(bare, "rev-parse", ref) or "").strip()
    base = (_git(bare, "merge-base", f"refs/heads/{target}", head) or "").strip()
    if position.get("head_sha") != head or position.get("base_sha") != base:
        return "must be a valid line code"  # the diff refs are not the merge request's
    files = diff_files(_git(bare, "diff", "--no-color", f"{base}...{head}") or "")
    file = files.get(str(position.get("new_path")))
    new, old = position.get("new_line"), position.get("old_line")
    if file is None or (new is None and old is None):
        return "can't be blank"
    line = file.at(new, "RIGHT") if isinstance(new, int) else file.at(int(old or 0), "LEFT")
    if line is None or (line.old_line, line.new_line) != (old, new):
        return "must be a valid line code"
    return None


def create_discussion(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    iid = int(request.params["iid"])
    merge_request = find_merge_request(api, project, iid) if project is not None else None
    if project is None or merge_request is None:
        return 404, message(404, "Not found")
    body = body_text(request, "body")
    if body is None:
        return missing("body")
    position = (request.body or {}).get("position")
    note_type = "DiscussionNote"
    if isinstance(position, dict):
        if project.bare is not None:
            problem = _position_problem(project.bare, merge_request, position)
            if problem is not None:
                return _invalid(problem)
        note_type = "DiffNote"
    note = Note(
        api.new_id(),
        project.id,
        "merge_requests",
        iid,
        body,
        request.user,
        secrets.token_hex(20),
        type=note_type,
        position=position if isinstance(position, dict) else None,
    )
    api.notes[note.id] = note
    return 201, _discussion_json(api, [note])


REVIEW_ROUTES = {"POST /projects/{id}/merge_requests/{iid}/discussions": create_discussion}
