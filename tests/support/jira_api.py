"""A local Jira REST API (v2) on loopback: the endpoints Resolver calls, in Jira's JSON shapes.

    api = JiraAPI()                                           # Jira Cloud; deployment="Server"
    bot = api.add_user("Resolver", name="resolver")           # for Data Center
    api.add_api_token("bot@example.com", "ATATT3x…", bot)     # Basic email:api_token (Cloud)
    api.add_pat("NjM4…", bot)                                 # Bearer personal access token (DC)
    api.add_issue("SP-10", summary="Export fails")
    api.fail("POST /rest/api/2/issue/{issueIdOrKey}/comment", 429, headers={"Retry-After": "7"})
    ... point the client at api.site ...
    api.requests                                              # everything it was sent, in order

Errors use Jira's document (`{"errorMessages": [...], "errors": {}}`); an issue the caller may
not see is a 404, as in Jira. Routes are written as Jira's path templates.
https://developer.atlassian.com/cloud/jira/platform/rest/v2/api-group-issue-comments/
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from tests.support.standin import template_params, template_regex

API = "/rest/api/2"
NOT_AUTHENTICATED = "You are not authenticated. Authentication required to perform this operation."
NO_ISSUE = "Issue does not exist or you do not have permission to see it."
Deployment = Literal["Cloud", "Server"]


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it; `path` is without the site's context path."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int
    route: str | None


@dataclass
class Fault:
    status: int
    remaining: int
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class User:
    account_id: str
    display_name: str
    name: str | None = None  # Data Center username
    account_type: str = "atlassian"


@dataclass
class Comment:
    id: int
    issue_id: int
    body: str
    author: User
    created: datetime
    updated: datetime


@dataclass
class Issue:
    id: int
    key: str
    summary: str
    description: str | None
    readers: frozenset[str] | None = None  # account ids that may see it; None: everyone
    comments: list[Comment] = field(default_factory=list)


@dataclass(frozen=True)
class Request:
    params: dict[str, str]
    query: dict[str, list[str]]
    body: Any
    user: User | None


Answer = tuple[int, Any]
Handler = Callable[["JiraAPI", Request], Answer]


def error_body(*messages: str, errors: dict[str, str] | None = None) -> dict[str, Any]:
    """Jira's error document."""
    return {"errorMessages": list(messages), "errors": errors or {}}


def _timestamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}+0000"


class JiraAPI:
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`."""

    def __init__(self, *, deployment: Deployment = "Cloud", context_path: str = "") -> None:
        self.deployment = deployment
        self.context_path = context_path.rstrip("/")
        self.lock = threading.RLock()
        self.requests: list[Recorded] = []
        self.users: list[User] = []
        self.basic: dict[tuple[str, str], User] = {}
        self.bearer: dict[str, User] = {}
        self.issues: dict[int, Issue] = {}
        self._faults: dict[str, Fault] = {}
        self._ids = itertools.count(10_000)
        self._clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    # --- set-up and inspection from tests
    @property
    def site(self) -> str:
        """The site's base URL, as a user would configure it (with any context path)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.context_path}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def add_user(
        self, display_name: str, *, name: str | None = None, account_type: str = "atlassian"
    ) -> User:
        user = User(f"5b10ac8d82e05b22cc7d{next(self._ids)}", display_name, name, account_type)
        self.users.append(user)
        return user

    def add_api_token(self, email: str, token: str, user: User) -> None:
        """An Atlassian API token: Basic auth as `email:token` (Jira Cloud)."""
        self.basic[(email, token)] = user

    def add_pat(self, token: str, user: User) -> None:
        """A personal access token: `Authorization: Bearer` (Jira Data Center)."""
        self.bearer[token] = user

    def add_issue(
        self,
        key: str,
        summary: str = "",
        description: str | None = None,
        readers: frozenset[str] | None = None,
    ) -> Issue:
        issue = Issue(next(self._ids), key, summary, description, readers)
        self.issues[issue.id] = issue
        return issue

    def add_comment(self, key: str, body: str, author: User) -> Comment:
        """An existing comment, a minute after the one before."""
        issue = self.issue_by_key(key)
        assert issue is not None, key
        return self.new_comment(issue, body, author)

    def issue_by_key(self, key_or_id: str) -> Issue | None:
        for issue in self.issues.values():
            if key_or_id in (issue.key, str(issue.id)):
                return issue
        return None

    def new_comment(self, issue: Issue, body: str, author: User) -> Comment:
        self._clock += timedelta(minutes=1)
        comment = Comment(next(self._ids), issue.id, body, author, self._clock, self._clock)
        issue.comments.append(comment)
        return comment

    def fail(
        self,
        route: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
    ) -> None:
        """Answer the next `times` calls to `route` ("METHOD /template") with `status`; a `body`
        that is a string is sent as it is (a proxy's page), anything else as JSON."""
        if route not in ROUTES:
            raise KeyError(f"no such route: {route}")
        default = error_body("Internal server error" if status >= 500 else "Request failed")
        self._faults[route] = Fault(status, times, headers or {}, default if body is None else body)

    def calls(self, route: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.route == route]

    # --- request handling (called by the server thread)
    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        """Record the request and answer it: status, JSON body and extra headers."""
        url = urlsplit(raw_path)
        path = url.path.removeprefix(self.context_path)
        query = parse_qs(url.query)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        with self.lock:
            route, params = _match_route(method, path)
            status, answer, extra = self._dispatch(route, params, method, query, headers, body)
            self.requests.append(Recorded(method, path, query, headers, body, status, route))
            return status, answer, extra

    def _dispatch(
        self,
        route: str | None,
        params: dict[str, str],
        method: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
    ) -> tuple[int, Any, dict[str, str]]:
        if route is None:
            return 404, error_body("null for uri"), {}
        fault = self._faults.get(route)
        if fault is not None and fault.remaining > 0:
            fault.remaining -= 1
            return fault.status, fault.body, fault.headers
        user = self._authenticate(headers.get("authorization", ""))
        if user is None and route not in ANONYMOUS:
            return (
                401,
                error_body(NOT_AUTHENTICATED),
                {"X-Seraph-LoginReason": "AUTHENTICATED_FAILED"},
            )
        if method in ("POST", "PUT") and "application/json" not in headers.get("content-type", ""):
            return 415, error_body("Unsupported Media Type"), {}
        if method in ("POST", "PUT") and not isinstance(body, dict):
            return 400, error_body("Unexpected character in the request body"), {}
        return (*ROUTES[route](self, Request(params, query, body, user)), {})

    def _authenticate(self, authorization: str) -> User | None:
        scheme, _, credentials = authorization.partition(" ")
        if scheme == "Bearer":
            return self.bearer.get(credentials)
        if scheme != "Basic":
            return None
        try:
            email, _, token = base64.b64decode(credentials, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return self.basic.get((email, token))

    def visible_issue(self, request: Request) -> Issue | None:
        issue = self.issue_by_key(request.params["issueIdOrKey"])
        if issue is None or request.user is None:
            return None
        if issue.readers is not None and request.user.account_id not in issue.readers:
            return None
        return issue

    def user_json(self, user: User) -> dict[str, Any]:
        if self.deployment == "Cloud":
            return {
                "self": f"{self.site}{API}/user?accountId={user.account_id}",
                "accountId": user.account_id,
                "displayName": user.display_name,
                "active": True,
                "timeZone": "Europe/Berlin",
                "accountType": user.account_type,
            }
        return {
            "self": f"{self.site}{API}/user?username={user.name}",
            "name": user.name,
            "key": f"JIRAUSER{user.account_id[-5:]}",
            "displayName": user.display_name,
            "emailAddress": f"{user.name}@example.com",
            "active": True,
            "timeZone": "Europe/Berlin",
        }

    def comment_json(self, issue: Issue, comment: Comment) -> dict[str, Any]:
        author = self.user_json(comment.author)
        return {
            "self": f"{self.site}{API}/issue/{issue.id}/comment/{comment.id}",
            "id": str(comment.id),
            "author": author,
            "body": comment.body,
            "updateAuthor": author,
            "created": _timestamp(comment.created),
            "updated": _timestamp(comment.updated),
            **({"jsdPublic": True} if self.deployment == "Cloud" else {}),
        }


# --- handlers, one per route --------------------------------------------------------------


def server_info(api: JiraAPI, request: Request) -> Answer:
    cloud = api.deployment == "Cloud"
    version = [1001, 0, 0] if cloud else [9, 12, 4]
    return 200, {
        "baseUrl": api.site,
        "version": ".".join(map(str, version)) + ("-SNAPSHOT" if cloud else ""),
        "versionNumbers": version,
        "deploymentType": api.deployment,
        "buildNumber": 100_245 if cloud else 9_12_004,
        "serverTitle": "Jira",
    }


def myself(api: JiraAPI, request: Request) -> Answer:
    assert request.user is not None
    return 200, api.user_json(request.user)


def get_issue(api: JiraAPI, request: Request) -> Answer:
    issue = api.visible_issue(request)
    if issue is None:
        return 404, error_body(NO_ISSUE)
    wanted = ",".join(request.query.get("fields", ["*all"])).split(",")
    fields = {
        "summary": issue.summary,
        "description": issue.description,
        "comment": _comment_page(api, issue, 0, len(issue.comments) or 1, "created"),
    }
    if "*all" not in wanted and "*navigable" not in wanted:
        fields = {name: value for name, value in fields.items() if name in wanted}
    return 200, {
        "expand": "renderedFields,names,schema,operations,editmeta,changelog",
        "id": str(issue.id),
        "self": f"{api.site}{API}/issue/{issue.id}",
        "key": issue.key,
        "fields": fields,
    }


def _comment_page(api: JiraAPI, issue: Issue, start: int, limit: int, order: str) -> dict[str, Any]:
    ordered = sorted(issue.comments, key=lambda c: (c.created, c.id))
    if order.startswith("-"):
        ordered.reverse()
    page = ordered[start : start + limit]
    return {
        "startAt": start,
        "maxResults": limit,
        "total": len(ordered),
        "comments": [api.comment_json(issue, c) for c in page],
    }


def _int_query(request: Request, name: str, default: int) -> int | None:
    values = request.query.get(name)
    if not values:
        return default
    return int(values[0]) if values[0].isdigit() else None


def list_comments(api: JiraAPI, request: Request) -> Answer:
    issue = api.visible_issue(request)
    if issue is None:
        return 404, error_body(NO_ISSUE)
    start = _int_query(request, "startAt", 0)
    limit = _int_query(request, "maxResults", 5000)
    order = request.query.get("orderBy", ["created"])[0]
    if start is None or limit is None or order.lstrip("+-") != "created":
        return 400, error_body("Invalid request parameters")
    return 200, _comment_page(api, issue, start, min(limit, 5000), order)


def _body(request: Request) -> str | None:
    body = request.body.get("body") if isinstance(request.body, dict) else None
    return body if isinstance(body, str) and body.strip() else None


def add_comment(api: JiraAPI, request: Request) -> Answer:
    issue = api.visible_issue(request)
    if issue is None:
        return 404, error_body(NO_ISSUE)
    body = _body(request)
    if body is None:
        return 400, error_body(errors={"comment": "Comment body can not be empty!"})
    assert request.user is not None
    comment = api.new_comment(issue, body, request.user)
    return 201, api.comment_json(issue, comment)


def _find_comment(api: JiraAPI, request: Request) -> tuple[Issue, Comment] | None:
    issue = api.visible_issue(request)
    if issue is None:
        return None
    for comment in issue.comments:
        if str(comment.id) == request.params["id"]:
            return issue, comment
    return None


def _no_comment(api: JiraAPI, request: Request) -> Answer:
    if api.visible_issue(request) is None:
        return 404, error_body(NO_ISSUE)
    return 404, error_body(f"Can not find a comment for the id: {request.params['id']}.")


def get_comment(api: JiraAPI, request: Request) -> Answer:
    found = _find_comment(api, request)
    if found is None:
        return _no_comment(api, request)
    return 200, api.comment_json(*found)


def update_comment(api: JiraAPI, request: Request) -> Answer:
    found = _find_comment(api, request)
    if found is None:
        return _no_comment(api, request)
    issue, comment = found
    if request.user != comment.author:
        return 403, error_body("You do not have the permission to edit this comment.")
    body = _body(request)
    if body is None:
        return 400, error_body(errors={"comment": "Comment body can not be empty!"})
    comment.body = body
    comment.updated += timedelta(seconds=1)
    return 200, api.comment_json(issue, comment)


ROUTES: dict[str, Handler] = {
    f"GET {API}/serverInfo": server_info,
    f"GET {API}/myself": myself,
    f"GET {API}/issue/{{issueIdOrKey}}": get_issue,
    f"GET {API}/issue/{{issueIdOrKey}}/comment": list_comments,
    f"POST {API}/issue/{{issueIdOrKey}}/comment": add_comment,
    f"GET {API}/issue/{{issueIdOrKey}}/comment/{{id}}": get_comment,
    f"PUT {API}/issue/{{issueIdOrKey}}/comment/{{id}}": update_comment,
}
ANONYMOUS = frozenset({f"GET {API}/serverInfo"})
_COMPILED = [(key.split(" ", 1)[0], template_regex(key.split(" ", 1)[1]), key) for key in ROUTES]


def _match_route(method: str, path: str) -> tuple[str | None, dict[str, str]]:
    for route_method, regex, key in _COMPILED:
        found = regex.match(path)
        if route_method == method and found:
            return key, dict(zip(template_params(key), found.groups(), strict=True))
    return None, {}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def do_PUT(self) -> None:
        self._answer()

    def do_DELETE(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: tests read `api.requests`."""

    def _answer(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, answer, extra = self.server.api.handle(self.command, self.path, headers, raw)
        raw_text = isinstance(answer, str)  # a fault's page from a proxy in front of Jira
        data = answer.encode() if raw_text else json.dumps(answer).encode()
        self.send_response(status)
        content_type = "text/html" if raw_text else "application/json;charset=UTF-8"
        self.send_header("Content-Type", content_type)
        self.send_header("X-AREQUESTID", f"{next(self.server.request_ids)}x1")
        for name, value in extra.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, api: JiraAPI) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.api = api
        self.request_ids = itertools.count(540)
