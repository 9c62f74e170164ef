"""A local GitLab REST API (v4) on loopback: the endpoints Resolver calls, in GitLab's shapes.

    api = GitLabAPI()
    bot = api.add_token("glpat-…", "resolver")            # a token and the user it acts as
    project = api.add_project("group/widgets", clone_url=git.url_for("group/widgets"), bare=...)
    api.add_member(project, alice, 30)                     # Developer
    api.add_issue(project, 7, "The widget breaks")
    api.fail("POST /projects/{id}/merge_requests", 502, times=2)   # the next two calls fail
    ... point RESOLVER_GITLAB_URL at api.url ...
    api.requests                                           # everything it was sent, in order

Every endpoint needs a token it was given, as `PRIVATE-TOKEN` or `Authorization: Bearer`.
Projects are addressed by numeric id or URL-encoded path (`group%2Fwidgets`). Routes are written
as GitLab's path templates below `/api/v4`. https://docs.gitlab.com/api/rest/
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tests.support.git_http import branch_head
from tests.support.standin import Reply, RestStandIn, Routed

API_PREFIX = "/api/v4"
DEVELOPER = 30
DRAFT_PREFIX = re.compile(r"^\s*(\[draft\]|\(draft\)|draft:|draft\s-\s|draft\s)", re.IGNORECASE)
KINDS = {"issues": "Issue", "merge_requests": "MergeRequest"}


@dataclass
class Project:
    id: int
    path_with_namespace: str
    clone_url: str
    default_branch: str = "main"
    bare: Path | None = None
    members: dict[int, int] = field(default_factory=dict)  # user id -> access level
    issues: dict[int, str] = field(default_factory=dict)  # iid -> title


@dataclass
class Note:
    id: int
    project_id: int
    kind: str  # "issues" or "merge_requests"
    iid: int
    body: str
    author: int
    discussion_id: str
    type: str | None = None  # None, "DiscussionNote" or "DiffNote"
    system: bool = False
    position: dict[str, Any] | None = None
    resolved: bool = False
    awards: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class MergeRequest:
    id: int
    iid: int
    project_id: int
    source_branch: str
    target_branch: str
    title: str
    description: str
    author: int
    state: str = "opened"

    @property
    def draft(self) -> bool:
        return DRAFT_PREFIX.match(self.title) is not None


@dataclass(frozen=True)
class Request(Routed):
    """A routed request and the id of the user its token acts as."""

    user: int


@dataclass(frozen=True)
class Paged:
    """A list answer and its pagination headers."""

    items: list[Any]
    headers: dict[str, str]


Answer = tuple[int, Any]
Handler = Callable[["GitLabAPI", Request], Answer]


def message(status: int, text: str) -> Any:
    """GitLab's error document: `{"message": "404 Project Not Found"}`."""
    return {"message": f"{status} {text}"}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class GitLabAPI(RestStandIn):
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`."""

    METHODS = frozenset({"GET", "POST", "PUT", "DELETE"})
    NOT_FOUND = {"error": "404 Not Found"}
    JSON_TYPE = "application/json"
    TEXT_BODIES = (bytes,)  # a fault's bytes: Rack::Attack's 429 is plain text ("Retry later")

    def __init__(self) -> None:
        self.users: dict[int, str] = {}
        self.tokens: dict[str, int] = {}  # token -> user id it acts as
        self.projects: dict[int, Project] = {}
        self.notes: dict[int, Note] = {}
        self.merge_requests: list[MergeRequest] = []
        self._ids = iter(range(100_001, 10**9))  # clear of ids from recorded payloads
        super().__init__(ROUTES, API_PREFIX, prefix_required=True)

    # --- set-up and inspection from tests
    @property
    def url(self) -> str:
        """The instance URL (`settings.gitlab_url`); the API is below `/api/v4`."""
        return self.origin

    def add_user(self, username: str, user_id: int | None = None) -> int:
        """A GitLab user; returns its numeric id (the same one for the same name)."""
        for known, name in self.users.items():
            if name == username:
                return known
        user_id = user_id or self.new_id()
        self.users[user_id] = username
        return user_id

    def add_token(self, token: str, username: str) -> int:
        """A token the API accepts, acting as `username`; returns the user's id."""
        user_id = self.add_user(username)
        self.tokens[token] = user_id
        return user_id

    def add_project(self, path: str, clone_url: str, **options: Any) -> Project:
        """A project; `id` may be given (to match a recorded payload), else one is assigned."""
        project = Project(options.pop("id", None) or self.new_id(), path, clone_url, **options)
        self.projects[project.id] = project
        return project

    def add_member(self, project: Project, user_id: int, access_level: int) -> None:
        project.members[user_id] = access_level

    def add_issue(self, project: Project, iid: int, title: str = "An issue") -> None:
        project.issues[iid] = title

    def add_merge_request(
        self, project: Project, source_branch: str, title: str = "A change", **options: Any
    ) -> MergeRequest:
        """An existing merge request; `iid` may be given, else the next one is used."""
        iid = options.pop("iid", None) or self.next_iid(project)
        values: dict[str, Any] = {
            "target_branch": project.default_branch,
            "description": "",
            "author": self.add_user("someone"),
            **options,
        }
        merge_request = MergeRequest(
            self.new_id(), iid, project.id, source_branch, title=title, **values
        )
        self.merge_requests.append(merge_request)
        return merge_request

    def add_note(
        self, project: Project, kind: str, iid: int, body: str, author: str, **options: Any
    ) -> Note:
        """An existing note on `kind` ("issues" or "merge_requests") `iid`; a `discussion_id`
        option adds it to that thread, an `id` option fixes its id."""
        options.setdefault("discussion_id", secrets.token_hex(20))
        note_id = options.pop("id", None) or self.new_id()
        note = Note(note_id, project.id, kind, iid, body, self.add_user(author), **options)
        self.notes[note.id] = note
        return note

    def fault_body(self, status: int) -> Any:
        return message(status, "Internal Server Error" if status >= 500 else "Failed")

    def reply_headers(self) -> dict[str, str]:
        return {"X-Request-Id": secrets.token_hex(13).upper()}

    def new_id(self) -> int:
        return next(self._ids)

    def next_iid(self, project: Project) -> int:
        return 1 + max(
            (m.iid for m in self.merge_requests if m.project_id == project.id), default=0
        )

    def project(self, request: Request) -> Project | None:
        key = unquote(request.params["id"])
        if key.isdigit():
            return self.projects.get(int(key))
        return next((p for p in self.projects.values() if p.path_with_namespace == key), None)

    def user_json(self, user_id: int) -> dict[str, Any]:
        username = self.users.get(user_id, "ghost")
        return {
            "id": user_id,
            "username": username,
            "name": username.title(),
            "state": "active",
            "avatar_url": None,
            "web_url": f"{self.url}/{username}",
        }

    def serve(self, call: Routed) -> Reply:
        """Every route needs a known token; a list answer carries its pagination headers."""
        user = self._authenticate(call.headers)
        if user is None:
            return 401, message(401, "Unauthorized"), {}
        request = Request(**vars(call), user=user)
        status, answer = ROUTES[call.route](self, request)
        if isinstance(answer, Paged):
            return status, answer.items, answer.headers
        return status, answer, {}

    def _authenticate(self, headers: dict[str, str]) -> int | None:
        token = headers.get("private-token")
        if token is None and headers.get("authorization", "").startswith("Bearer "):
            token = headers["authorization"][7:]
        return self.tokens.get(token or "")


# --- handlers, one per route --------------------------------------------------------------


def _paged(request: Request, items: list[Any]) -> Answer:
    """One page of `items`, with GitLab's offset pagination headers."""
    per_page = min(int(request.query.get("per_page", ["20"])[0]), 100)
    page = max(int(request.query.get("page", ["1"])[0]), 1)
    pages = max(1, -(-len(items) // per_page))
    headers = {
        "X-Page": str(page),
        "X-Per-Page": str(per_page),
        "X-Total": str(len(items)),
        "X-Total-Pages": str(pages),
        "X-Next-Page": str(page + 1) if page < pages else "",
        "X-Prev-Page": str(page - 1) if page > 1 else "",
    }
    return 200, Paged(items[(page - 1) * per_page : page * per_page], headers)


def _text(request: Request, key: str) -> str | None:
    value = (request.body or {}).get(key)
    return value if isinstance(value, str) and value else None


def _missing(*names: str) -> Answer:
    """Grape's answer to absent required parameters."""
    return 400, {"error": ", ".join(f"{name} is missing" for name in names)}


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
        "visibility": "private",
        "http_url_to_repo": project.clone_url,
        "ssh_url_to_repo": f"git@gitlab.example.invalid:{project.path_with_namespace}.git",
        "web_url": f"{api.url}/{project.path_with_namespace}",
        "archived": False,
    }


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


def _noteable(api: GitLabAPI, request: Request) -> tuple[Project | None, str, int]:
    """The project, the kind from the route (`issues`, `merge_requests`) and the iid, or a None
    project when either does not exist."""
    kind = request.route.split("/")[3]
    iid = int(request.params["iid"])
    project = api.project(request)
    if project is None:
        return None, kind, iid
    exists = (
        iid in project.issues if kind == "issues" else _merge_request(api, project, iid) is not None
    )
    return (project if exists else None), kind, iid


def _merge_request(api: GitLabAPI, project: Project, iid: int) -> MergeRequest | None:
    return next((m for m in api.merge_requests if (m.project_id, m.iid) == (project.id, iid)), None)


def _note_json(api: GitLabAPI, note: Note) -> dict[str, Any]:
    resolvable = note.type is not None
    data = {
        "id": note.id,
        "type": note.type,
        "body": note.body,
        "attachment": None,
        "author": api.user_json(note.author),
        "created_at": _now(),
        "updated_at": _now(),
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
    return _paged(request, [_note_json(api, n) for n in notes])


def create_note(api: GitLabAPI, request: Request) -> Answer:
    project, kind, iid = _noteable(api, request)
    if project is None:
        return 404, message(404, "Not found")
    body = _text(request, "body")
    if body is None:
        return _missing("body")
    note = Note(api.new_id(), project.id, kind, iid, body, request.user, secrets.token_hex(20))
    api.notes[note.id] = note
    return 201, _note_json(api, note)


def _own_note(api: GitLabAPI, request: Request, discussion: str | None) -> Answer | Note:
    """The note a PUT is for, or the error answer: 404 when absent, 403 when not the author's."""
    project, kind, iid = _noteable(api, request)
    note = api.notes.get(int(request.params["note_id"]))
    if (
        project is None
        or note is None
        or (note.project_id, note.kind, note.iid)
        != (
            project.id,
            kind,
            iid,
        )
    ):
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
    body = _text(request, "body")
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
    return _paged(request, [_discussion_json(api, notes) for notes in threads.values()])


def create_discussion_note(api: GitLabAPI, request: Request) -> Answer:
    project, kind, iid = _noteable(api, request)
    discussion = request.params["discussion_id"]
    thread = [] if project is None else _notes_of(api, project, kind, iid)
    first = next(
        (n for n in sorted(thread, key=lambda n: n.id) if n.discussion_id == discussion), None
    )
    if project is None or first is None:
        return 404, message(404, "Discussion Not Found")
    body = _text(request, "body")
    if body is None:
        return _missing("body")
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
    project, kind, iid = _noteable(api, request)
    note = api.notes.get(int(request.params["note_id"]))
    if (
        project is None
        or note is None
        or (note.project_id, note.kind, note.iid)
        != (
            project.id,
            kind,
            iid,
        )
    ):
        return 404, message(404, "Not found")
    name = _text(request, "name")
    if name is None:
        return _missing("name")
    if (request.user, name) in note.awards:
        return 404, message(404, "Award Emoji Name has already been taken Not Found")
    note.awards.append((request.user, name))
    return 201, {
        "id": api.new_id(),
        "name": name,
        "user": api.user_json(request.user),
        "created_at": _now(),
        "updated_at": _now(),
        "awardable_id": note.id,
        "awardable_type": "Note",
    }


def _merge_request_json(api: GitLabAPI, project: Project, mr: MergeRequest) -> dict[str, Any]:
    return {
        "id": mr.id,
        "iid": mr.iid,
        "project_id": project.id,
        "source_project_id": project.id,
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
    found = [
        _merge_request_json(api, project, m)
        for m in reversed(api.merge_requests)
        if m.project_id == project.id
        and state in (m.state, "all")
        and source in (None, m.source_branch)
    ]
    return _paged(request, found)


def get_merge_request(api: GitLabAPI, request: Request) -> Answer:
    project = api.project(request)
    found = None if project is None else _merge_request(api, project, int(request.params["iid"]))
    if project is None or found is None:
        return 404, message(404, "Not found")
    return 200, _merge_request_json(api, project, found)


def _branch_exists(project: Project, branch: str) -> bool:
    return project.bare is None or branch_head(project.bare, branch) is not None


def _merge_request_problem(api: GitLabAPI, project: Project, body: dict[str, Any]) -> Answer | None:
    """GitLab's validation: absent branches are 400, conflicts with open MRs 409."""
    missing = {
        name: ["does not exist"]
        for name in ("source_branch", "target_branch")
        if not _branch_exists(project, body[name])
    }
    if missing:
        return 400, {"message": missing}
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
    absent = [n for n in ("source_branch", "target_branch", "title") if not _text(request, n)]
    if absent:
        return _missing(*absent)
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


ROUTES: dict[str, Handler] = {
    "GET /projects/{id}": get_project,
    "GET /projects/{id}/members/all/{user_id}": get_member,
    "GET /projects/{id}/merge_requests": list_merge_requests,
    "POST /projects/{id}/merge_requests": create_merge_request,
    "GET /projects/{id}/merge_requests/{iid}": get_merge_request,
}
for _kind in KINDS:
    _base = f"/projects/{{id}}/{_kind}/{{iid}}"
    ROUTES |= {
        f"GET {_base}/notes": list_notes,
        f"POST {_base}/notes": create_note,
        f"PUT {_base}/notes/{{note_id}}": update_note,
        f"POST {_base}/notes/{{note_id}}/award_emoji": award_emoji,
        f"GET {_base}/discussions": list_discussions,
        f"POST {_base}/discussions/{{discussion_id}}/notes": create_discussion_note,
        f"PUT {_base}/discussions/{{discussion_id}}/notes/{{note_id}}": update_note,
    }
