"""A local GitLab REST API (v4) on loopback: the endpoints Resolver calls, in GitLab's shapes.

    api = GitLabAPI()
    bot = api.add_token("glpat-…", "resolver")            # a token and the user it acts as
    project = api.add_project("group/widgets", clone_url=git.url_for("group/widgets"), bare=...)
    api.add_member(project, alice, 30)                     # Developer
    api.add_issue(project, 7, "The widget breaks")
    api.fail("POST /projects/{id}/merge_requests", 502, times=2)   # the next two calls fail
    ... point RESOLVER_GITLAB_URL at api.url ...
    api.requests                                           # everything it was sent, in order

Every endpoint needs a token it was given, as `PRIVATE-TOKEN` or `Authorization: Bearer`;
`GET /user` answers with the user the token acts as.
Projects are addressed by numeric id or URL-encoded path (`group%2Fwidgets`). Routes are written
as GitLab's path templates below `/api/v4`. https://docs.gitlab.com/api/rest/

A person signs in with GitLab's OAuth flow on the instance URL (outside `requests`, which are
the API's): `add_oauth_app`, `sign_in_as`, then the application's redirects. A private project
is hidden from the user of such a token unless they are a member, as GitLab hides it; tokens
given with `add_token` (the bot's, PATs) see every project, as the bot is no member of those
it works on.

The records are in `state`; the handlers are in `projects` and `notes`;
the OAuth flow is in `oauth`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from integrations.gitlab.standin.hook_list import HOOK_ROUTES, Hook
from integrations.gitlab.standin.notes import (
    award_emoji,
    create_discussion_note,
    create_note,
    list_discussions,
    list_notes,
    resolve_discussion,
    update_note,
)
from integrations.gitlab.standin.oauth import (
    EXPIRED,
    OAUTH_ROUTES,
    Authorization,
    OAuthWeb,
    revoke_authorization,
)
from integrations.gitlab.standin.projects import (
    create_merge_request,
    get_current_user,
    get_member,
    get_merge_request,
    get_project,
    list_merge_requests,
    update_merge_request,
)
from integrations.gitlab.standin.reviews import REVIEW_ROUTES
from integrations.gitlab.standin.state import (
    DRAFT_PREFIX,
    KINDS,
    Answer,
    MergeRequest,
    Note,
    Paged,
    Project,
    Request,
    message,
)
from integrations.standin.server import Reply, RestStandIn, Routed

__all__ = [
    "API_PREFIX",
    "DEVELOPER",
    "DRAFT_PREFIX",
    "KINDS",
    "ROUTES",
    "Answer",
    "Authorization",
    "GitLabAPI",
    "Handler",
    "MergeRequest",
    "Note",
    "Paged",
    "Project",
    "Request",
    "award_emoji",
    "create_discussion_note",
    "create_merge_request",
    "create_note",
    "get_current_user",
    "get_member",
    "get_merge_request",
    "get_project",
    "list_discussions",
    "list_merge_requests",
    "list_notes",
    "message",
    "update_note",
]

API_PREFIX = "/api/v4"
DEVELOPER = 30

Handler = Callable[["GitLabAPI", Request], Answer]


class GitLabAPI(RestStandIn):
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`."""

    METHODS = frozenset({"GET", "POST", "PUT", "DELETE"})
    NOT_FOUND = {"error": "404 Not Found"}
    WEB_ROUTES = OAUTH_ROUTES  # the OAuth flow and the sign-in page, outside /api/v4
    JSON_TYPE = "application/json"
    TEXT_BODIES = (bytes,)  # a fault's bytes: Rack::Attack's 429 is plain text ("Retry later")

    def __init__(self) -> None:
        self.users: dict[int, str] = {}
        self.tokens: dict[str, int] = {}  # token -> user id it acts as
        self.projects: dict[int, Project] = {}
        self.notes: dict[int, Note] = {}
        self.merge_requests: list[MergeRequest] = []
        self.hooks: dict[int, Hook] = {}  # project webhooks (hook_list)
        self.job_traces: dict[int, bytes] = {}  # CI job id -> its log
        self.resolutions: list[tuple[str, bool, int]] = []  # discussion id, resolved, by user
        self.oauth = OAuthWeb()
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

    def add_oauth_app(self, client_id: str, client_secret: str) -> None:
        """An OAuth application that may send people to sign in."""
        self.oauth.apps[client_id] = client_secret

    def revoke_authorization(self, username: str) -> None:
        """`username` revokes the OAuth application in their GitLab settings."""
        revoke_authorization(self, self.add_user(username))

    def sign_in_as(self, username: str, user_id: int | None = None) -> int:
        """Who the browser is signed in to GitLab as: the person who approves applications.
        `user_id` fixes the id of a user not known yet; returns the user's id."""
        known = self.add_user(username, user_id)
        if user_id is not None and known != user_id:
            raise ValueError(f"{username} already has the id {known}")
        self.oauth.signed_in = username
        return known

    def add_project(self, path: str, clone_url: str, **options: Any) -> Project:
        """A project; `id` may be given (to match a recorded payload), else one is assigned."""
        project = Project(options.pop("id", None) or self.new_id(), path, clone_url, **options)
        self.projects[project.id] = project
        return project

    def add_hook(self, project: Project, url: str, token: str = "", **events: bool) -> Hook:
        """A project webhook to `url`, on the events given (push events unless told)."""
        hook = Hook(self.new_id(), project.id, url, token, dict(events))
        self.hooks[hook.id] = hook
        return hook

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
        return self.project_by_key(request.params["id"])

    def project_by_key(self, key: str) -> Project | None:
        """The project of a path's `:id`: a number or the URL-encoded path."""
        key = unquote(key)
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
        token = self._token(call.headers)
        if self.oauth.expired(token):
            return 401, EXPIRED, {}
        user = self.tokens.get(token)
        if user is None:
            return 401, message(401, "Unauthorized"), {}
        if "id" in call.params and self._hides(token, user, call.params["id"]):
            return 404, message(404, "Project Not Found"), {}
        request = Request(**vars(call), user=user)
        status, answer = ROUTES[call.route](self, request)
        if isinstance(answer, Paged):
            return status, answer.items, answer.headers
        return status, answer, {}

    def _token(self, headers: dict[str, str]) -> str:
        token = headers.get("private-token")
        if token is None and headers.get("authorization", "").startswith("Bearer "):
            token = headers["authorization"][7:]
        return token or ""

    def _hides(self, token: str, user: int, key: str) -> bool:
        """Whether project `key` is hidden from an OAuth token's user: private, no member."""
        project = self.project_by_key(key)
        return (
            token in self.oauth.access_tokens
            and project is not None
            and project.visibility == "private"
            and user not in project.members
        )


def get_job_trace(api: GitLabAPI, request: Request) -> Answer:
    """A job's log as plain text. https://docs.gitlab.com/api/jobs/#get-a-log-file"""
    trace = api.job_traces.get(int(request.params["job_id"]))
    if trace is None or api.project_by_key(request.params["id"]) is None:
        return 404, message(404, "Not found")
    return 200, trace


ROUTES: dict[str, Handler] = {
    **HOOK_ROUTES,
    "GET /user": get_current_user,
    "GET /projects/{id}": get_project,
    "GET /projects/{id}/members/all/{user_id}": get_member,
    "GET /projects/{id}/merge_requests": list_merge_requests,
    "POST /projects/{id}/merge_requests": create_merge_request,
    "GET /projects/{id}/merge_requests/{iid}": get_merge_request,
    "PUT /projects/{id}/merge_requests/{iid}": update_merge_request,
    "GET /projects/{id}/jobs/{job_id}/trace": get_job_trace,
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
ROUTES["PUT /projects/{id}/merge_requests/{iid}/discussions/{discussion_id}"] = resolve_discussion
ROUTES |= REVIEW_ROUTES
