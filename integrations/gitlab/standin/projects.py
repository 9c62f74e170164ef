"""The GitLab stand-in's current user, project, membership and merge request routes, in
GitLab's shapes.

Handlers take the `GitLabAPI` and a `Request` and return a status and an answer; `api`
maps routes to them. https://docs.gitlab.com/api/users/ https://docs.gitlab.com/api/merge_requests/
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from integrations.gitlab.standin.state import (
    Answer,
    MergeRequest,
    Project,
    Request,
    body_text,
    message,
    missing,
    paged,
)
from integrations.standin.git_http import branch_head

if TYPE_CHECKING:
    from integrations.gitlab.standin.api import GitLabAPI


def get_current_user(api: GitLabAPI, request: Request) -> Answer:
    """The user the request's token acts as (an unknown token never gets this far: 401)."""
    user = api.user_json(request.user)
    return 200, {
        **user,
        "locked": False,
        "bot": False,
        "created_at": "2024-01-01T00:00:00.000Z",
        "bio": "",
        "public_email": None,
        "email": f"{user['username']}@example.invalid",
        "is_admin": False,
        "external": False,
        "private_profile": False,
        "two_factor_enabled": False,
        "can_create_project": True,
        "identities": [],
    }


def get_project(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    if project is None:
        return 404, message(404, "Project Not Found")
    namespace, _, name = project.path_with_namespace.rpartition("/")
    return 200, {
        "id": project.id,
        "name": name,
        "path": name,
        "path_with_namespace": project.path_with_namespace,
        "name_with_namespace": project.path_with_namespace.replace("/", " / "),
        "namespace": {"full_path": namespace, "kind": "group"},
        "default_branch": project.default_branch,
        "visibility": project.visibility,
        "http_url_to_repo": project.clone_url,
        "ssh_url_to_repo": f"git@gitlab.example.invalid:{project.path_with_namespace}.git",
        "web_url": f"{api.url}/{project.path_with_namespace}",
        "archived": False,
        "permissions": _permissions(project, request.user),
    }


def _permissions(project: Project, user_id: int) -> dict[str, Any]:
    """The requester's own access to the project; the stand-in has no group memberships."""
    level = project.members.get(user_id)
    access = None if level is None else {"access_level": level, "notification_level": 3}
    return {"project_access": access, "group_access": None}


def get_member(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    if project is None:
        return 404, message(404, "Project Not Found")
    user_id = int(request.params["user_id"])
    level = project.members.get(user_id)
    if level is None:
        return 404, message(404, "Not found")
    return 200, {
        **api.user_json(user_id),
        "access_level": level,
        "expires_at": None,
        "membership_state": "active",
    }


def find_merge_request(api: GitLabAPI, project: Project, iid: int) -> MergeRequest | None:
    """The project's merge request `iid`, if there is one."""
    return next((m for m in api.merge_requests if (m.project_id, m.iid) == (project.id, iid)), None)


def _merge_request_json(api: GitLabAPI, project: Project, mr: MergeRequest) -> dict[str, Any]:
    return {
        "id": mr.id,
        "iid": mr.iid,
        "project_id": project.id,
        "source_project_id": mr.source_project_id or project.id,
        "target_project_id": project.id,
        "title": mr.title,
        "description": mr.description,
        "state": mr.state,
        "draft": mr.draft,
        "work_in_progress": mr.draft,
        "source_branch": mr.source_branch,
        "target_branch": mr.target_branch,
        "author": api.user_json(mr.author),
        "web_url": f"{api.url}/{project.path_with_namespace}/-/merge_requests/{mr.iid}",
        "references": {"short": f"!{mr.iid}", "full": f"{project.path_with_namespace}!{mr.iid}"},
        "detailed_merge_status": "checking",
    }


def list_merge_requests(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    if project is None:
        return 404, message(404, "Project Not Found")
    state = request.query.get("state", ["all"])[0]
    source = request.query.get("source_branch", [None])[0]
    target = request.query.get("target_branch", [None])[0]
    found = [
        _merge_request_json(api, project, m)
        for m in reversed(api.merge_requests)
        if m.project_id == project.id
        and state in (m.state, "all")
        and source in (None, m.source_branch)
        and target in (None, m.target_branch)
    ]
    return paged(request, found, f"{api.url}/api/v4/projects/{project.id}/merge_requests")


def get_merge_request(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    found = (
        None if project is None else find_merge_request(api, project, int(request.params["iid"]))
    )
    if project is None or found is None:
        return 404, message(404, "Not found")
    return 200, _merge_request_json(api, project, found)


def update_merge_request(api: GitLabAPI, request: Request) -> Answer:
    """Edit a merge request's title or description."""
    project = api.project(request)
    found = (
        None if project is None else find_merge_request(api, project, int(request.params["iid"]))
    )
    if project is None or found is None:
        return 404, message(404, "Not found")
    body = request.body or {}
    found.title = str(body.get("title", found.title))
    found.description = str(body.get("description", found.description))
    return 200, _merge_request_json(api, project, found)


def _branch_exists(project: Project, branch: str) -> bool:
    return project.bare is None or branch_head(project.bare, branch) is not None


def _merge_request_problem(api: GitLabAPI, project: Project, body: dict[str, Any]) -> Answer | None:
    """GitLab's validation: absent branches are 400, conflicts with open MRs 409."""
    missing_branches = {
        name: ["does not exist"]
        for name in ("source_branch", "target_branch")
        if not _branch_exists(project, body[name])
    }
    if missing_branches:
        return 400, {"message": missing_branches}
    if body["source_branch"] == body["target_branch"]:
        return 409, {"message": ["You can't use same project/branch for source and target"]}
    for other in api.merge_requests:
        same = (other.source_branch, other.target_branch) == (
            body["source_branch"],
            body["target_branch"],
        )
        if other.project_id == project.id and other.state == "opened" and same:
            text = f"Another open merge request already exists for this source branch: !{other.iid}"
            return 409, {"message": [text]}
    return None


def create_merge_request(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    if project is None:
        return 404, message(404, "Project Not Found")
    body = request.body or {}
    absent = [n for n in ("source_branch", "target_branch", "title") if not body_text(request, n)]
    if absent:
        return missing(*absent)
    problem = _merge_request_problem(api, project, body)
    if problem is not None:
        return problem
    merge_request = MergeRequest(
        api.new_id(),
        api.next_iid(project),
        project.id,
        body["source_branch"],
        body["target_branch"],
        body["title"],
        body.get("description") or "",
        request.user,
    )
    api.merge_requests.append(merge_request)
    return 201, _merge_request_json(api, project, merge_request)
