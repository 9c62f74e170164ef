"""A local Jira REST API (v2) on loopback: the endpoints Resolver calls, in Jira's JSON shapes.

    api = JiraAPI()                                           # Jira Cloud; deployment="Server"
    bot = api.add_user("Resolver", name="resolver")           # for Data Center
    api.add_api_token("bot@example.com", "ATATT3x…", bot)     # Basic email:api_token (Cloud)
    api.add_pat("NjM4…", bot)                                 # Bearer personal access token (DC)
    api.add_issue("SP-10", summary="Export fails")
    api.fail("POST /rest/api/2/issue/{issueIdOrKey}/comment", 429, headers={"Retry-After": "7"})
    api.fail("POST /rest/api/2/issue/{issueIdOrKey}/comment", 504, applied=True)  # a lost answer
    ... point the client at api.site ...
    api.requests                                              # everything it was sent, in order

Errors use Jira's document (`{"errorMessages": [...], "errors": {}}`); an issue the caller may
not see is a 404, as in Jira. Routes are written as Jira's path templates. Comments keep their
comment properties: set with the comment (POST, or a PUT that sends some), listed with
`expand=properties`, kept by a PUT that sends none.
https://developer.atlassian.com/cloud/jira/platform/rest/v2/api-group-issue-comments/

Here: the server, its set-up API, authentication and the JSON shapes of users and comments.
The site's dataclasses are in state, the routes' handlers in routes.
"""

from __future__ import annotations

import base64
import binascii
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from integrations.jira.standin.routes import ANONYMOUS, NO_ISSUE, ROUTES, Handler
from integrations.jira.standin.state import API, Answer, Comment, Issue, Request, User, error_body
from integrations.standin.server import Reply, RestStandIn, Routed

# Tests import the stand-in's names from here, wherever they are defined.
__all__ = [
    "ANONYMOUS",
    "API",
    "NOT_AUTHENTICATED",
    "NO_ISSUE",
    "ROUTES",
    "Answer",
    "Comment",
    "Deployment",
    "Handler",
    "Issue",
    "JiraAPI",
    "Request",
    "User",
    "error_body",
]

NOT_AUTHENTICATED = "You are not authenticated. Authentication required to perform this operation."
Deployment = Literal["Cloud", "Server"]


def _timestamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}+0000"


class JiraAPI(RestStandIn):
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`."""

    METHODS = frozenset({"GET", "POST", "PUT", "DELETE"})
    NOT_FOUND = error_body("null for uri")
    JSON_TYPE = "application/json;charset=UTF-8"
    TEXT_TYPE = "text/html"
    TEXT_BODIES = (str,)  # a fault's page from a proxy in front of Jira

    def __init__(self, *, deployment: Deployment = "Cloud", context_path: str = "") -> None:
        self.deployment = deployment
        self.users: list[User] = []
        self.basic: dict[tuple[str, str], User] = {}
        self.bearer: dict[str, User] = {}
        self.issues: dict[int, Issue] = {}
        self.listed_webhooks: list[dict[str, Any]] = []  # as Jira lists them (preflight)
        self._ids = itertools.count(10_000)
        self._request_ids = itertools.count(540)
        self._clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        super().__init__(ROUTES, context_path.rstrip("/"))

    # --- set-up and inspection from tests
    @property
    def site(self) -> str:
        """The site's base URL, as a user would configure it (with any context path)."""
        return f"{self.origin}{self.prefix}"

    @property
    def context_path(self) -> str:
        """The path a Data Center site is served below (`/jira`), or ""."""
        return self.prefix

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

    def add_comment(
        self, key: str, body: str, author: User, properties: dict[str, Any] | None = None
    ) -> Comment:
        """An existing comment, a minute after the one before."""
        issue = self.issue_by_key(key)
        assert issue is not None, key
        return self.new_comment(issue, body, author, properties or {})

    @property
    def now(self) -> datetime:
        """The site's clock: the last comment's creation; the next one comes a minute later."""
        return self._clock

    def issue_by_key(self, key_or_id: str) -> Issue | None:
        for issue in self.issues.values():
            if key_or_id in (issue.key, str(issue.id)):
                return issue
        return None

    def new_comment(
        self, issue: Issue, body: str, author: User, properties: dict[str, Any]
    ) -> Comment:
        self._clock += timedelta(minutes=1)
        comment = Comment(
            next(self._ids), issue.id, body, author, self._clock, self._clock, dict(properties)
        )
        issue.comments.append(comment)
        return comment

    def fault_body(self, status: int) -> Any:
        return error_body("Internal server error" if status >= 500 else "Request failed")

    def reply_headers(self) -> dict[str, str]:
        return {"X-AREQUESTID": f"{next(self._request_ids)}x1"}

    def parse_body(self, raw: bytes) -> Any:
        """A body that is not JSON is recorded as text (and answered with a 400)."""
        try:
            return super().parse_body(raw)
        except ValueError:
            return raw.decode(errors="replace")

    def serve(self, call: Routed) -> Reply:
        user = self._authenticate(call.headers.get("authorization", ""))
        if user is None and call.route not in ANONYMOUS:
            return (
                401,
                error_body(NOT_AUTHENTICATED),
                {"X-Seraph-LoginReason": "AUTHENTICATED_FAILED"},
            )
        writes = call.method in ("POST", "PUT")
        if writes and "application/json" not in call.headers.get("content-type", ""):
            return 415, error_body("Unsupported Media Type"), {}
        if writes and not isinstance(call.body, dict):
            return 400, error_body("Unexpected character in the request body"), {}
        request = Request(**vars(call), user=user)
        return (*ROUTES[call.route](self, request), {})

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

    def comment_json(
        self, issue: Issue, comment: Comment, expand: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
        author = self.user_json(comment.author)
        properties = [{"key": key, "value": value} for key, value in comment.properties.items()]
        return {
            "self": f"{self.site}{API}/issue/{issue.id}/comment/{comment.id}",
            "id": str(comment.id),
            "author": author,
            "body": comment.body,
            "updateAuthor": author,
            "created": _timestamp(comment.created),
            "updated": _timestamp(comment.updated),
            **({"jsdPublic": True} if self.deployment == "Cloud" else {}),
            **({"properties": properties} if "properties" in expand else {}),
        }
