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
published OpenAPI description (openapi_paths.json), and GraphQL operations (`POST /graphql`, in
`graphql`) against the published GraphQL schema.

A person signs in with GitHub's OAuth web flow on `web_url` (outside `requests`, which are the
REST API's): `add_oauth_app`, `sign_in_as`, then the app's redirects. A user's token sees a
private repository only as a collaborator, as GitHub hides it from everyone else.

The records are in `state`; the handlers are in `repos` and `comments`;
the OAuth web flow is in `oauth`; the OpenAPI checks are in `conformance`.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import jwt

from integrations.github.standin.app_hooks import APP_ROUTES, App
from integrations.github.standin.checks import (
    CHECK_ROUTES,
    DOWNLOADS,
    Checks,
    Redirect,
    serve_download,
)
from integrations.github.standin.comments import (
    REACTIONS,
    create_comment,
    create_reaction,
    create_reply,
    create_review_reaction,
    list_comments,
    list_review_comments,
    update_comment,
    update_review_comment,
)
from integrations.github.standin.conformance import (
    OPENAPI_FIXTURE,
    conformance_problems,
    openapi_operation,
    openapi_operations,
)
from integrations.github.standin.graphql import GRAPHQL_ROUTE, GraphQLState, serve_graphql
from integrations.github.standin.manifest import (
    MANIFEST_ROUTES,
    Manifests,
    new_app_page,
    public_key_of,
)
from integrations.github.standin.oauth import (
    OAUTH_ROUTES,
    Authorization,
    OAuthWeb,
    revoke_authorization,
)
from integrations.github.standin.repos import (
    LEGACY_PERMISSION,
    create_access_token,
    create_pull,
    get_authenticated_user,
    get_permission,
    get_pull,
    get_repo,
    list_pulls,
    update_pull,
)
from integrations.github.standin.reviews import REVIEW_ROUTES, Review
from integrations.github.standin.state import (
    BOT_LOGIN,
    DOCS,
    Answer,
    Comment,
    Page,
    Pull,
    Repo,
    Request,
    error_body,
    user_json,
)
from integrations.standin.git_http import run_git
from integrations.standin.server import Recorded, Reply, RestStandIn, Routed

__all__ = [
    "BOT_LOGIN",
    "DOCS",
    "LEGACY_PERMISSION",
    "OPENAPI_FIXTURE",
    "REACTIONS",
    "ROUTES",
    "ROUTE_KEYS",
    "Answer",
    "Authorization",
    "Comment",
    "GitHubAPI",
    "Handler",
    "Page",
    "Pull",
    "Recorded",
    "Repo",
    "Request",
    "conformance_problems",
    "error_body",
    "openapi_operation",
    "openapi_operations",
]

Handler = Callable[["GitHubAPI", Request], Answer]


def _int_query(call: Routed, name: str, default: int) -> int:
    values = call.query.get(name)
    return int(values[-1]) if values and values[-1].isdigit() else default


class GitHubAPI(RestStandIn):
    """The stand-in's state and behaviour; the HTTP server around it starts in `__init__`."""

    METHODS = frozenset({"GET", "POST", "PATCH", "PUT", "DELETE"})
    NOT_FOUND = error_body(404, "Not Found")
    WEB_ROUTES = OAUTH_ROUTES  # the OAuth web flow, on the origin as on github.com

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
        self.token_scopes: dict[
            str, frozenset[str]
        ] = {}  # token -> the repository names it may use
        self.token_requests: list[dict[str, Any]] = []
        self.minted: list[str] = []
        self.jwt_claims: list[dict[str, Any]] = []
        self.comments: dict[int, Comment] = {}
        self.review_comments: dict[int, Comment] = {}
        self.pulls: list[Pull] = []
        self.reviews: list[Review] = []  # pull request reviews, with their comments (reviews)
        self.oauth = OAuthWeb()
        self.manifests = Manifests()  # Apps created from a manifest (manifest)
        self.user_ids: dict[str, int] = {}  # login -> its numeric id
        self._ids = iter(range(1_000_001, 10**9))
        self.app = App(int(app_id))  # GET /app, its webhook and deliveries (app_hooks)
        self.checks = Checks()  # check runs' annotations and Actions logs (checks)
        self.graphql = GraphQLState()  # review threads resolved over GraphQL (graphql)
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

    def add_oauth_app(self, client_id: str, client_secret: str) -> None:
        """An OAuth app (or a GitHub App's client) that may send people to sign in."""
        self.oauth.apps[client_id] = client_secret

    def revoke_authorization(self, login: str) -> None:
        """`login` revokes the OAuth app in their GitHub settings."""
        revoke_authorization(self, login)

    def sign_in_as(self, login: str, user_id: int | None = None) -> None:
        """Who the browser is signed in to GitHub as: the person who approves apps.
        `user_id` fixes the login's numeric id."""
        if user_id is not None:
            self.user_ids[login] = user_id
        self.oauth.signed_in = login

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
        diff_hunk: str | None = None,
        review_id: int | None = None,
    ) -> int:
        """An existing comment on a pull request's diff (of the review `review_id`)."""
        comment = Comment(next(self._ids), repo, pull_number, body, login, path=path, line=line)
        comment.diff_hunk, comment.review_id = diff_hunk, review_id
        self.review_comments[comment.id] = comment
        return comment.id

    def add_pull(
        self, repo: str, head: str, base: str, title: str, author: str, fork: str | None = None
    ) -> Pull:
        """An open pull request someone opened (its branch must exist in the bare repository).
        From a `fork`: the head branch's commit is served as `refs/pull/N/head` and the branch
        itself leaves the bare repository, as it lives in the fork."""
        with self.lock:
            number = len(self.pulls) + 1
            pull = Pull(number, repo, head, base, title, "", False, author=author, head_repo=fork)
            bare = self.repos[repo].bare if repo in self.repos else None
            if fork is not None and bare is not None:
                run_git("--git-dir", str(bare), "update-ref", f"refs/pull/{number}/head", head)
                run_git("--git-dir", str(bare), "update-ref", "-d", f"refs/heads/{head}")
            self.pulls.append(pull)
            return pull

    def fault_body(self, status: int) -> Any:
        return error_body(status, "Server Error" if status >= 500 else "Failed")

    def reply_headers(self) -> dict[str, str]:
        return {"X-GitHub-Request-Id": secrets.token_hex(8).upper()}

    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw: bytes) -> Reply:
        if method == "GET" and raw_path.startswith(DOWNLOADS):
            with self.lock:
                return serve_download(self, raw_path, headers)
        if self.prefix.endswith("/v3") and raw_path == self.prefix.removesuffix("/v3") + "/graphql":
            raw_path = f"{self.prefix}/graphql"  # GHES serves GraphQL at /api/graphql, not below v3
        page = new_app_page(self, method, raw_path, headers, raw)
        return page if page is not None else super().handle(method, raw_path, headers, raw)

    def serve(self, call: Routed) -> Reply:
        """App routes take an App's JWT; a manifest's code needs nothing else; every other
        route a token the stand-in minted or was given."""
        authorization = call.headers.get("authorization", "")
        path = call.route.split(" ", 1)[1]
        if path.startswith("/app-manifests/"):
            problem, login = None, ""
        elif path == "/app" or path.startswith("/app/"):
            problem, login = self._check_jwt(authorization)
        else:
            sent = authorization.partition(" ")[2]
            login = "" if self.oauth.expired(sent) else self.tokens.get(sent, "")
            problem = (
                None
                if login and authorization.startswith(("token ", "Bearer "))
                else "Bad credentials"
            )
        if problem is not None:
            return 401, error_body(401, problem), {}
        token = authorization.partition(" ")[2]
        owner, repo = call.params.get("owner"), call.params.get("repo")
        if owner and repo and not self.may_reach(token, f"{owner}/{repo}"):
            return (
                404,
                error_body(404, "Not Found"),
                {},
            )  # as GitHub answers for a token's blind spot
        request = Request(**vars(call), login=login)
        status, answer = ROUTES[call.route](self, request)
        if isinstance(answer, Page):
            return (status, *self._paged(call, answer.items))
        if isinstance(answer, Redirect):
            return status, None, {"Location": answer.location}
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

    def _check_jwt(self, authorization: str) -> tuple[str | None, str]:
        """A problem with an App's JWT (None: fine), and the login it acts as (`app/ID`)."""
        undecodable = "A JSON web token could not be decoded", ""
        if not authorization.startswith("Bearer "):
            return undecodable
        try:
            issuer = str(jwt.decode(authorization[7:], options={"verify_signature": False})["iss"])
        except (jwt.PyJWTError, KeyError):
            return undecodable
        public_key = public_key_of(self, issuer)
        if public_key is None:
            return "Integration not found", ""
        try:
            claims = jwt.decode(
                authorization[7:],
                public_key,
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"]},
            )
        except jwt.PyJWTError:
            return undecodable
        self.jwt_claims.append(claims)
        if claims["exp"] > time.time() + 600:
            return "'Expiration time' claim ('exp') is too far in the future", ""
        return None, f"app/{issuer}"

    def repo(self, request: Request) -> Repo | None:
        return self.repos.get(f"{request.params['owner']}/{request.params['repo']}")

    def new_id(self) -> int:
        return next(self._ids)

    def user_id(self, login: str) -> int:
        """The login's numeric id: the same one each time it is asked for."""
        if login not in self.user_ids:
            self.user_ids[login] = self.new_id()
        return self.user_ids[login]

    def user_json(self, login: str) -> dict[str, Any]:
        """GitHub's simple user, with the login's id."""
        return user_json(login, self.user_id(login), self.web_url)

    def may_reach(self, token: str, full_name: str) -> bool:
        """Whether a token may act on `owner/name`. An installation token: any repository,
        unless it was minted for some only. A user's: public ones and those they collaborate on."""
        scope = self.token_scopes.get(token)
        if scope is not None:
            return full_name.split("/")[-1] in scope
        login, repo = self.tokens.get(token, ""), self.repos.get(full_name)
        hidden = repo is not None and repo.private and login not in repo.collaborators
        return login.endswith("[bot]") or not hidden

    def may_reach_path(self, token: str, path: str) -> bool:
        """`may_reach` for a git smart-HTTP path (`/owner/name.git/info/refs`)."""
        parts = path.strip("/").split("/")
        return len(parts) >= 2 and self.may_reach(
            token, f"{parts[0]}/{parts[1].removesuffix('.git')}"
        )

    def mint(self, repositories: frozenset[str] | None = None) -> str:
        """A token in GitHub's 2026 stateless shape: long, with dots, never 40 characters."""
        parts = (
            base64.urlsafe_b64encode(secrets.token_bytes(n)).decode().rstrip("=")
            for n in (12, 30, 24)
        )
        token = f"ghs_{self.app_id}_" + ".".join(parts)
        self.tokens[token] = BOT_LOGIN
        if repositories is not None:
            self.token_scopes[token] = repositories
        self.minted.append(token)
        return token


ROUTES: dict[str, Handler] = {
    "POST /app/installations/{installation_id}/access_tokens": create_access_token,
    "GET /user": get_authenticated_user,
    "GET /repos/{owner}/{repo}": get_repo,
    "GET /repos/{owner}/{repo}/collaborators/{username}/permission": get_permission,
    "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": create_reaction,
    "POST /repos/{owner}/{repo}/issues/{issue_number}/comments": create_comment,
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": update_comment,
    "GET /repos/{owner}/{repo}/pulls": list_pulls,
    "POST /repos/{owner}/{repo}/pulls": create_pull,
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies": create_reply,
    "GET /repos/{owner}/{repo}/pulls/{pull_number}": get_pull,
    "PATCH /repos/{owner}/{repo}/pulls/{pull_number}": update_pull,
    "GET /repos/{owner}/{repo}/issues/{issue_number}/comments": list_comments,
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments": list_review_comments,
    "PATCH /repos/{owner}/{repo}/pulls/comments/{comment_id}": update_review_comment,
    "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions": create_review_reaction,
    **REVIEW_ROUTES,
    **CHECK_ROUTES,
    **APP_ROUTES,
    **MANIFEST_ROUTES,  # GET /app and its hook config: a created App, else the one above
    GRAPHQL_ROUTE: serve_graphql,  # checked against the GraphQL schema, not the OpenAPI one
}
ROUTE_KEYS = frozenset(ROUTES) - {GRAPHQL_ROUTE}  # the REST routes
