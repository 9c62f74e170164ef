"""A local GitHub REST API on loopback: the endpoints Resolver calls, in GitHub's JSON shapes.

    api = GitHubAPI(app_id="1234", public_key=pem)       # the App whose JWTs it accepts
    api.add_installation(42)
    api.add_repo("octo/widgets", clone_url=git.url_for("octo/widgets"), collaborators={...})
    api.fail("POST /repos/{owner}/{repo}/pulls", 502, times=2)   # the next two calls fail
    ... point RESOLVER_GITHUB_API_URL at api.base_url ...
    api.requests                                          # everything it was sent, in order

App JWTs are verified with the App's public key (RS256, iss, iat, exp at most 10 minutes
ahead); every other endpoint needs a token it minted or was given with `add_token`. Routes are
written as GitHub's path templates; `conformance_problems` checks recorded requests against the
published OpenAPI description (tests/support/github_openapi_paths.json).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jwt

from tests.support.git_http import branch_head
from tests.support.standin import Recorded, Reply, RestStandIn, Routed, template_regex

OPENAPI_FIXTURE = Path(__file__).with_name("github_openapi_paths.json")
DOCS = "https://docs.github.com/rest"
BOT_LOGIN = "resolver[bot]"
REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})
# role_name -> the legacy `permission` GitHub reports beside it.
LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
}


@dataclass
class Repo:
    full_name: str
    clone_url: str
    default_branch: str = "main"
    private: bool = False
    collaborators: dict[str, str] = field(default_factory=dict)
    bare: Path | None = None
    drafts_supported: bool = True
    id: int = field(default_factory=lambda: secrets.randbelow(10**8))


@dataclass
class Comment:
    id: int
    repo: str
    number: int
    body: str
    login: str
    reactions: list[tuple[str, str]] = field(default_factory=list)
    in_reply_to: int | None = None
    path: str | None = None
    line: int | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass
class Pull:
    number: int
    repo: str
    head: str
    base: str
    title: str
    body: str
    draft: bool
    state: str = "open"
    author: str = BOT_LOGIN


@dataclass(frozen=True)
class Request(Routed):
    """A routed request and the login it acts as."""

    login: str


Answer = tuple[int, Any]


@dataclass(frozen=True)
class Page:
    """A list answer that GitHub pages (`per_page`, `page` and a Link header)."""

    items: list[Any]


def _int_query(call: Routed, name: str, default: int) -> int:
    values = call.query.get(name)
    return int(values[-1]) if values and values[-1].isdigit() else default


Handler = Callable[["GitHubAPI", Request], Answer]


def error_body(status: int, message: str, errors: list[dict[str, str]] | None = None) -> Any:
    """GitHub's error document."""
    body: dict[str, Any] = {"message": message, "documentation_url": DOCS, "status": str(status)}
    if errors:
        body["errors"] = errors
    return body


def _now() -> str:
    return _timestamp(datetime.now(UTC))


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _since(request: Request) -> datetime | None:
    """The `since` query parameter (ISO 8601): only comments updated at or after it."""
    values = request.query.get("since")
    if not values:
        return None
    return datetime.fromisoformat(values[-1].replace("Z", "+00:00"))


def _updated_since(comment: Comment, since: datetime | None) -> bool:
    # GitHub's timestamps are whole seconds.
    return since is None or comment.updated_at.replace(microsecond=0) >= since


def _user(login: str) -> dict[str, Any]:
    kind = "Bot" if login.endswith("[bot]") else "User"
    return {"login": login, "id": abs(hash(login)) % 10**7, "type": kind}


class GitHubAPI(RestStandIn):
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`."""

    METHODS = frozenset({"GET", "POST", "PATCH", "PUT", "DELETE"})
    NOT_FOUND = error_body(404, "Not Found")

    def __init__(
        self,
        *,
        app_id: str,
        public_key: str,
        prefix: str = "",
        token_lifetime: timedelta = timedelta(hours=1),
    ) -> None:
        self.app_id = app_id
        self.public_key = public_key
        self.token_lifetime = token_lifetime
        self.repos: dict[str, Repo] = {}
        self.installations: set[int] = set()
        self.tokens: dict[str, str] = {}  # token -> login it acts as
        self.minted: list[str] = []
        self.jwt_claims: list[dict[str, Any]] = []
        self.comments: dict[int, Comment] = {}
        self.review_comments: dict[int, Comment] = {}
        self.pulls: list[Pull] = []
        self._ids = iter(range(1_000_001, 10**9))
        super().__init__(ROUTES, prefix.rstrip("/"))

    # --- set-up and inspection from tests
    @property
    def base_url(self) -> str:
        return f"{self.origin}{self.prefix}"

    @property
    def web_url(self) -> str:
        return self.origin

    def add_installation(self, installation_id: int) -> None:
        self.installations.add(installation_id)

    def add_token(self, token: str, login: str) -> None:
        """A user token (PAT or OAuth) the API accepts, acting as `login`."""
        self.tokens[token] = login

    def add_repo(self, full_name: str, clone_url: str, **options: Any) -> Repo:
        repo = Repo(full_name, clone_url, **options)
        self.repos[full_name] = repo
        return repo

    def add_comment(self, repo: str, number: int, body: str, login: str) -> int:
        """An existing conversation comment (the one that triggered a job)."""
        comment = Comment(next(self._ids), repo, number, body, login)
        self.comments[comment.id] = comment
        return comment.id

    def add_review_comment(
        self,
        repo: str,
        pull_number: int,
        body: str,
        login: str,
        path: str | None = None,
        line: int | None = None,
    ) -> int:
        """An existing comment on a pull request's diff."""
        comment = Comment(next(self._ids), repo, pull_number, body, login, path=path, line=line)
        self.review_comments[comment.id] = comment
        return comment.id

    def add_pull(self, repo: str, head: str, base: str, title: str, author: str) -> Pull:
        """An open pull request someone opened (its branch must exist in the bare repository)."""
        with self.lock:
            pull = Pull(len(self.pulls) + 1, repo, head, base, title, "", False, author=author)
            self.pulls.append(pull)
            return pull

    def fault_body(self, status: int) -> Any:
        return error_body(status, "Server Error" if status >= 500 else "Failed")

    def reply_headers(self) -> dict[str, str]:
        return {"X-GitHub-Request-Id": secrets.token_hex(8).upper()}

    def serve(self, call: Routed) -> Reply:
        """App routes take the App's JWT; every other route a token it minted or was given."""
        authorization = call.headers.get("authorization", "")
        if call.route.startswith("POST /app/"):
            problem = self._check_jwt(authorization)
            login = f"app/{self.app_id}"
        else:
            login = self.tokens.get(authorization.partition(" ")[2], "")
            problem = (
                None
                if login and authorization.startswith(("token ", "Bearer "))
                else "Bad credentials"
            )
        if problem is not None:
            return 401, error_body(401, problem), {}
        request = Request(**vars(call), login=login)
        status, answer = ROUTES[call.route](self, request)
        if isinstance(answer, Page):
            return (status, *self._paged(call, answer.items))
        return status, answer, {}

    def _paged(self, call: Routed, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
        """One page of `items`, as `per_page` (30 unless given, at most 100) and `page` ask,
        with GitHub's Link header to the other pages."""
        per_page = min(max(_int_query(call, "per_page", 30), 1), 100)
        page = max(_int_query(call, "page", 1), 1)
        last = max(1, -(-len(items) // per_page))
        path = call.route.split(" ", 1)[1].format(**call.params)

        def url(number: int) -> str:
            query = {k: v[-1] for k, v in call.query.items()} | {"page": str(number)}
            return f"{self.base_url}{path}?{urlencode(query)}"

        links = [("next", page + 1), ("last", last)] if page < last else []
        links += [("prev", page - 1), ("first", 1)] if page > 1 else []
        headers = {"Link": ", ".join(f'<{url(n)}>; rel="{rel}"' for rel, n in links)}
        return items[(page - 1) * per_page : page * per_page], headers if links else {}

    def _check_jwt(self, authorization: str) -> str | None:
        if not authorization.startswith("Bearer "):
            return "A JSON web token could not be decoded"
        try:
            claims = jwt.decode(
                authorization[7:],
                self.public_key,
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"]},
            )
        except jwt.PyJWTError:
            return "A JSON web token could not be decoded"
        self.jwt_claims.append(claims)
        if str(claims["iss"]) != self.app_id:
            return "Integration not found"
        if claims["exp"] > time.time() + 600:
            return "'Expiration time' claim ('exp') is too far in the future"
        return None

    def repo(self, request: Request) -> Repo | None:
        return self.repos.get(f"{request.params['owner']}/{request.params['repo']}")

    def new_id(self) -> int:
        return next(self._ids)

    def mint(self) -> str:
        """A token in GitHub's 2026 stateless shape: long, with dots, never 40 characters."""
        parts = (
            base64.urlsafe_b64encode(secrets.token_bytes(n)).decode().rstrip("=")
            for n in (12, 30, 24)
        )
        token = f"ghs_{self.app_id}_" + ".".join(parts)
        self.tokens[token] = BOT_LOGIN
        self.minted.append(token)
        return token


# --- handlers, one per route --------------------------------------------------------------


def create_access_token(api: GitHubAPI, request: Request) -> Answer:
    installation_id = int(request.params["installation_id"])
    if installation_id not in api.installations:
        return 404, error_body(404, "Not Found")
    expires = datetime.now(UTC) + api.token_lifetime
    return 201, {
        "token": api.mint(),
        "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "permissions": {"contents": "write", "issues": "write", "pull_requests": "write"},
        "repository_selection": "all",
    }


def get_repo(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    owner, name = repo.full_name.split("/")
    html = f"{api.web_url}/{repo.full_name}"
    return 200, {
        "id": repo.id,
        "node_id": f"R_{repo.id}",
        "name": name,
        "full_name": repo.full_name,
        "private": repo.private,
        "owner": _user(owner),
        "html_url": html,
        "url": f"{api.base_url}/repos/{repo.full_name}",
        "clone_url": repo.clone_url,
        "git_url": f"git://example.invalid/{repo.full_name}.git",
        "ssh_url": f"git@example.invalid:{repo.full_name}.git",
        "default_branch": repo.default_branch,
        "visibility": "private" if repo.private else "public",
        "archived": False,
        "disabled": False,
    }


def get_permission(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    login = request.params["username"]
    role = repo.collaborators.get(login, "none" if repo.private else "read")
    permission = LEGACY_PERMISSION.get(role, "none")
    return 200, {"permission": permission, "role_name": role, "user": _user(login)}


def create_reaction(api: GitHubAPI, request: Request) -> Answer:
    comment = api.comments.get(int(request.params["comment_id"]))
    if api.repo(request) is None or comment is None:
        return 404, error_body(404, "Not Found")
    return _react(api, request, comment)


def _react(api: GitHubAPI, request: Request, comment: Comment) -> Answer:
    content = (request.body or {}).get("content")
    if content not in REACTIONS:
        errors = [{"resource": "Reaction", "field": "content", "code": "invalid"}]
        return 422, error_body(422, "Validation Failed", errors)
    reaction = {"id": api.new_id(), "content": content, "user": _user(request.login)}
    if (request.login, content) in comment.reactions:
        return 200, {**reaction, "created_at": _now()}
    comment.reactions.append((request.login, content))
    return 201, {**reaction, "created_at": _now()}


def _comment_json(api: GitHubAPI, comment: Comment) -> dict[str, Any]:
    html = f"{api.web_url}/{comment.repo}/issues/{comment.number}#issuecomment-{comment.id}"
    return {
        "id": comment.id,
        "node_id": f"IC_{comment.id}",
        "url": f"{api.base_url}/repos/{comment.repo}/issues/comments/{comment.id}",
        "html_url": html,
        "issue_url": f"{api.base_url}/repos/{comment.repo}/issues/{comment.number}",
        "body": comment.body,
        "user": _user(comment.login),
        "created_at": _timestamp(comment.created_at),
        "updated_at": _timestamp(comment.updated_at),
        "author_association": "NONE",
    }


def _body_text(request: Request, key: str = "body") -> str | None:
    value = (request.body or {}).get(key)
    return value if isinstance(value, str) else None


def _missing(field_name: str, resource: str) -> Answer:
    errors = [{"resource": resource, "field": field_name, "code": "missing_field"}]
    return 422, error_body(422, "Validation Failed", errors)


def create_comment(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    body = _body_text(request)
    if body is None:
        return _missing("body", "IssueComment")
    number = int(request.params["issue_number"])
    comment = Comment(api.new_id(), repo.full_name, number, body, request.login)
    api.comments[comment.id] = comment
    return 201, _comment_json(api, comment)


def update_comment(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    comment = api.comments.get(int(request.params["comment_id"]))
    if repo is None or comment is None or comment.repo != repo.full_name:
        return 404, error_body(404, "Not Found")
    body = _body_text(request)
    if body is None:
        return _missing("body", "IssueComment")
    comment.body, comment.updated_at = body, datetime.now(UTC)
    return 200, _comment_json(api, comment)


def _pull_json(api: GitHubAPI, pull: Pull) -> dict[str, Any]:
    owner = pull.repo.split("/")[0]
    return {
        "id": 50_000 + pull.number,
        "number": pull.number,
        "state": pull.state,
        "draft": pull.draft,
        "title": pull.title,
        "body": pull.body,
        "html_url": f"{api.web_url}/{pull.repo}/pull/{pull.number}",
        "url": f"{api.base_url}/repos/{pull.repo}/pulls/{pull.number}",
        "head": {"label": f"{owner}:{pull.head}", "ref": pull.head},
        "base": {"label": f"{owner}:{pull.base}", "ref": pull.base},
        "user": _user(pull.author),
    }


def get_pull(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    number = int(request.params["pull_number"])
    found = [
        p for p in api.pulls if repo is not None and (p.repo, p.number) == (repo.full_name, number)
    ]
    if not found:
        return 404, error_body(404, "Not Found")
    return 200, _pull_json(api, found[0])


def list_comments(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    number, since = int(request.params["issue_number"]), _since(request)
    found = [
        _comment_json(api, c)
        for c in sorted(api.comments.values(), key=lambda c: c.id)
        if (c.repo, c.number) == (repo.full_name, number) and _updated_since(c, since)
    ]
    return 200, Page(found)


def _review_comment_json(api: GitHubAPI, comment: Comment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "in_reply_to_id": comment.in_reply_to,
        "body": comment.body,
        "path": comment.path,
        "line": comment.line,
        "user": _user(comment.login),
        "html_url": f"{api.web_url}/{comment.repo}/pull/{comment.number}#discussion_r{comment.id}",
        "pull_request_url": f"{api.base_url}/repos/{comment.repo}/pulls/{comment.number}",
        "created_at": _timestamp(comment.created_at),
        "updated_at": _timestamp(comment.updated_at),
    }


def list_review_comments(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    number, since = int(request.params["pull_number"]), _since(request)
    found = [
        _review_comment_json(api, c)
        for c in sorted(api.review_comments.values(), key=lambda c: c.id)
        if (c.repo, c.number) == (repo.full_name, number) and _updated_since(c, since)
    ]
    return 200, Page(found)


def update_review_comment(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    comment = api.review_comments.get(int(request.params["comment_id"]))
    if repo is None or comment is None or comment.repo != repo.full_name:
        return 404, error_body(404, "Not Found")
    body = _body_text(request)
    if body is None:
        return _missing("body", "PullRequestReviewComment")
    comment.body, comment.updated_at = body, datetime.now(UTC)
    return 200, _review_comment_json(api, comment)


def create_review_reaction(api: GitHubAPI, request: Request) -> Answer:
    comment = api.review_comments.get(int(request.params["comment_id"]))
    if api.repo(request) is None or comment is None:
        return 404, error_body(404, "Not Found")
    return _react(api, request, comment)


def list_pulls(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    state = request.query.get("state", ["open"])[0]
    head = request.query.get("head", [None])[0]
    owner = repo.full_name.split("/")[0]
    found = [
        _pull_json(api, p)
        for p in api.pulls
        if p.repo == repo.full_name
        and state in (p.state, "all")
        and (head is None or head == f"{owner}:{p.head}")
    ]
    return 200, found


def _branch_exists(repo: Repo, branch: str) -> bool:
    return repo.bare is None or branch_head(repo.bare, branch) is not None


def _invalid(message: str | None = None, field_name: str | None = None) -> Answer:
    error = {"resource": "PullRequest", "code": "custom" if message else "invalid"}
    error |= {"message": message} if message else {"field": field_name or ""}
    return 422, error_body(422, "Validation Failed", [error])


def create_pull(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    body = request.body or {}
    for name in ("title", "head", "base"):
        if not isinstance(body.get(name), str):
            return _missing(name, "PullRequest")
    owner = repo.full_name.split("/")[0]
    head = body["head"].removeprefix(f"{owner}:")
    if not _branch_exists(repo, head):
        return _invalid(field_name="head")
    for pull in api.pulls:
        if (pull.repo, pull.head, pull.base, pull.state) == (
            repo.full_name,
            head,
            body["base"],
            "open",
        ):
            return _invalid(f"A pull request already exists for {owner}:{head}.")
    if body.get("draft") and not repo.drafts_supported:
        return _invalid("Draft pull requests are not supported in this repository.")
    number = len(api.pulls) + 1
    pull = Pull(
        number,
        repo.full_name,
        head,
        body["base"],
        body["title"],
        body.get("body") or "",
        bool(body.get("draft")),
    )
    api.pulls.append(pull)
    return 201, _pull_json(api, pull)


def create_reply(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    parent = api.review_comments.get(int(request.params["comment_id"]))
    number = int(request.params["pull_number"])
    if repo is None or parent is None or (parent.repo, parent.number) != (repo.full_name, number):
        return 404, error_body(404, "Not Found")
    body = _body_text(request)
    if body is None:
        return _missing("body", "PullRequestReviewComment")
    reply = Comment(
        api.new_id(), repo.full_name, number, body, request.login, in_reply_to=parent.id
    )
    api.review_comments[reply.id] = reply
    return 201, {
        "id": reply.id,
        "in_reply_to_id": parent.id,
        "body": body,
        "user": _user(request.login),
        "html_url": f"{api.web_url}/{repo.full_name}/pull/{number}#discussion_r{reply.id}",
        "pull_request_url": f"{api.base_url}/repos/{repo.full_name}/pulls/{number}",
    }


ROUTES: dict[str, Handler] = {
    "POST /app/installations/{installation_id}/access_tokens": create_access_token,
    "GET /repos/{owner}/{repo}": get_repo,
    "GET /repos/{owner}/{repo}/collaborators/{username}/permission": get_permission,
    "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": create_reaction,
    "POST /repos/{owner}/{repo}/issues/{issue_number}/comments": create_comment,
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": update_comment,
    "GET /repos/{owner}/{repo}/pulls": list_pulls,
    "POST /repos/{owner}/{repo}/pulls": create_pull,
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies": create_reply,
    "GET /repos/{owner}/{repo}/pulls/{pull_number}": get_pull,
    "GET /repos/{owner}/{repo}/issues/{issue_number}/comments": list_comments,
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments": list_review_comments,
    "PATCH /repos/{owner}/{repo}/pulls/comments/{comment_id}": update_review_comment,
    "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions": create_review_reaction,
}
ROUTE_KEYS = frozenset(ROUTES)


# --- conformance with GitHub's published OpenAPI description ---------------------------------


@cache
def openapi_operations() -> dict[str, dict[str, list[str]]]:
    """`"METHOD /template"` -> its query parameter and JSON body property names."""
    data = json.loads(OPENAPI_FIXTURE.read_text())
    operations: dict[str, dict[str, list[str]]] = data["operations"]
    return operations


@cache
def _compiled_operations() -> list[tuple[str, re.Pattern[str], str, int]]:
    compiled = []
    for key in openapi_operations():
        method, template = key.split(" ", 1)
        literal = sum(1 for part in template.split("/") if part and "{" not in part)
        compiled.append((method, template_regex(template), key, literal))
    return compiled


def openapi_operation(method: str, path: str) -> str | None:
    """The spec's operation a request is for; the most literal template wins a tie."""
    found = [
        (lit, key) for m, rx, key, lit in _compiled_operations() if m == method and rx.match(path)
    ]
    return max(found)[1] if found else None


def conformance_problems(requests: list[Recorded]) -> list[str]:
    """Each request whose method, path, query names or body keys the description lacks."""
    problems = []
    operations = openapi_operations()
    for request in requests:
        key = openapi_operation(request.method, request.path)
        if key is None:
            problems.append(f"{request.method} {request.path}: no such operation")
            continue
        unknown_query = set(request.query) - set(operations[key].get("query", []))
        body_keys = set(request.body) if isinstance(request.body, dict) else set()
        unknown_body = body_keys - set(operations[key].get("body", []))
        if unknown_query or unknown_body:
            problems.append(f"{key}: unknown {sorted(unknown_query)} {sorted(unknown_body)}")
    return problems
