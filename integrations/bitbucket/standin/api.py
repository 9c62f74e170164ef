"""A local Bitbucket Cloud on loopback: the REST API 2.0 below `/2.0` that Resolver calls, and
the OAuth 2.0 pages people sign in through (`/site/oauth2/…`), in Bitbucket's shapes.

    api = BitbucketAPI()
    bot = api.add_token("bot-token", "resolver")            # a token and the account it acts as
    repo = api.add_repo("acme/widgets", clone_url=git.url_for("acme/widgets"))
    api.grant(repo, "resolver", "admin"); api.grant(repo, "alice", "write")
    api.fail("POST /repositories/{workspace}/{repo_slug}/pullrequests", 502, times=2)
    api.add_pipeline(repo, "resolver/3-fix", sha, [Step("FAILED", log=b"...")])  # Pipelines
    ... point the client at api.api_url ...
    api.requests, api.answers                                   # what it was sent and answered

Every API call needs a token it knows (`Authorization: Bearer …`). Routes are Bitbucket's path
templates; `conformance` checks requests and answers against the published API description.
The OAuth flow (outside `requests`) is in `oauth`, the handlers in `handlers` and (Pipelines,
with its logs' storage) `pipelines`, the records and their JSON in `state`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

from integrations.bitbucket.standin.handlers import ROUTES, Call, RefusedError
from integrations.bitbucket.standin.oauth import OAUTH_ROUTES, OAuthConsumers
from integrations.bitbucket.standin.pipelines import LOG_ROUTES, PIPELINE_ROUTES, Run, Step
from integrations.bitbucket.standin.state import PERMISSIONS, Comment, Hook, Pull, Repo, error
from integrations.bitbucket.standin.state import user_json as render_user
from integrations.standin.server import Reply, RestStandIn, Routed

API_PREFIX = "/2.0"
API_ROUTES: Final = {**ROUTES, **PIPELINE_ROUTES}


class NotFoundError(Exception):
    """A path's repository or pull request does not exist (or is hidden): 404."""


@dataclass(frozen=True)
class Answered:
    """A successful answer as it went out, for the conformance checks."""

    method: str
    path: str
    body: Any


class BitbucketAPI(RestStandIn):
    """The stand-in's state and behaviour; the HTTP server starts in `__init__`."""

    METHODS: ClassVar[frozenset[str]] = frozenset({"GET", "POST", "PUT", "DELETE"})
    NOT_FOUND: ClassVar[Any] = error("Resource not found")
    WEB_ROUTES = {**OAUTH_ROUTES, **LOG_ROUTES}
    TEXT_BODIES = (bytes,)  # a step's log

    def __init__(self) -> None:
        self.users: dict[str, str] = {}  # uuid -> nickname
        self.tokens: dict[str, str] = {}  # token -> the uuid it acts as
        self.repos: dict[str, Repo] = {}
        self.workspaces: dict[str, set[str]] = {}  # workspace -> its admins' uuids
        self.pulls: list[Pull] = []
        self.comments: dict[int, Comment] = {}
        self.hooks: dict[str, Hook] = {}
        self.pipelines: list[Run] = []
        self.logs_in_storage = True  # a completed step's log: a 307 to its storage
        self.log_downloads: list[dict[str, str]] = []  # the headers the storage was sent
        self.answers: list[Answered] = []
        self.oauth = OAuthConsumers()
        self._ids = iter(range(100_001, 10**9))
        super().__init__(API_ROUTES, API_PREFIX, prefix_required=True)

    # --- set-up and inspection from tests
    @property
    def url(self) -> str:
        """The web address (its OAuth pages); the API is `api_url`."""
        return self.origin

    @property
    def api_url(self) -> str:
        return self.origin + API_PREFIX

    def add_user(self, nickname: str) -> str:
        """An account (the same uuid for the same nickname); its uuid."""
        found = next((u for u, name in self.users.items() if name == nickname), None)
        if found is None:
            found = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"bitbucket:{nickname}")) + "}"
            self.users[found] = nickname
        return found

    def add_token(self, token: str, nickname: str) -> str:
        """A token the API accepts, acting as `nickname`; the account's uuid."""
        self.tokens[token] = self.add_user(nickname)
        return self.tokens[token]

    def add_repo(self, full_name: str, clone_url: str, **options: Any) -> Repo:
        repo = Repo("{" + str(uuid.uuid4()) + "}", full_name, clone_url, **options)
        self.repos[full_name] = repo
        self.workspaces.setdefault(repo.workspace, set())
        return repo

    def grant(self, repo: Repo, nickname: str, permission: str) -> None:
        """`nickname` may `read`, `write` or `admin` the repository."""
        repo.permissions[self.add_user(nickname)] = permission

    def add_workspace_admin(self, workspace: str, nickname: str) -> None:
        self.workspaces.setdefault(workspace, set()).add(self.add_user(nickname))

    def add_pull(self, repo: Repo, head: str, title: str = "A change", **options: Any) -> Pull:
        author = self.add_user(options.pop("author", "someone"))
        base = options.pop("base", repo.main)
        pull = Pull(self.next_pull_number(repo), repo.full_name, head, base, title, "", author)
        for name, value in options.items():
            setattr(pull, name, value)
        self.pulls.append(pull)
        return pull

    def add_comment(self, pull: Pull, raw: str, author: str, **options: Any) -> Comment:
        comment = Comment(self.new_id(), pull.repo, pull.id, raw, self.add_user(author), **options)
        self.comments[comment.id] = comment
        return comment

    def add_pipeline(self, repo: Repo, branch: str, commit: str, steps: list[Step]) -> Run:
        """A completed pipeline run on `commit` of `branch`, numbered after the last one."""
        number = 1 + max((r.build_number for r in self.pipelines), default=0)
        run = Run(repo.full_name, branch, commit, number, steps)
        self.pipelines.append(run)
        return run

    def new_id(self) -> int:
        return next(self._ids)

    def next_pull_number(self, repo: Repo) -> int:
        return 1 + max((p.id for p in self.pulls if p.repo == repo.full_name), default=0)

    # --- what the handlers ask
    def user(self, user: str) -> dict[str, Any]:
        return render_user(user, self.users.get(user, "former-user"), self.url)

    def permission(self, repo: Repo, user: str) -> str:
        return repo.permissions.get(user, "none")

    def can(self, repo: Repo, user: str, permission: str) -> bool:
        return PERMISSIONS.index(self.permission(repo, user)) >= PERMISSIONS.index(permission)

    def refuse(self, status: int, message: str) -> Reply:
        return status, error(message), {}

    def repo_of(self, call: Call) -> Repo:
        """The path's repository, if the caller may read it (anyone may read a public one)."""
        full_name = f"{call.params['workspace']}/{call.params['repo_slug']}"
        repo = self.repos.get(full_name)
        if repo is None or (repo.private and not self.can(repo, call.user, "read")):
            raise NotFoundError(full_name)
        return repo

    def pull_of(self, call: Call) -> Pull:
        repo, key = self.repo_of(call), call.params["pull_request_id"]
        number = int(key) if key.isdigit() else -1
        found = next((p for p in self.pulls if (p.repo, p.id) == (repo.full_name, number)), None)
        if found is None:
            raise NotFoundError(key)
        return found

    # --- the server's side
    def fault_body(self, status: int) -> Any:
        return error("Internal Server Error" if status >= 500 else "Failed")

    def serve(self, call: Routed) -> Reply:
        """Every route needs a known token; a path to nothing the caller may see is a 404."""
        token = self._token(call.headers)
        user = self.tokens.get(token)
        if user is None or self.oauth.expired(token):
            return self.refuse(401, "Access token expired or invalid.")
        try:
            return API_ROUTES[call.route](self, Call(call, user))
        except NotFoundError:
            return 404, self.NOT_FOUND, {}
        except RefusedError as refused:
            return self.refuse(refused.status, refused.message)

    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw: bytes) -> Reply:
        reply = super().handle(method, raw_path, headers, raw)
        path = urlsplit(raw_path).path
        if path.startswith(API_PREFIX) and reply[0] < 300:
            with self.lock:
                self.answers.append(Answered(method, path.removeprefix(API_PREFIX), reply[1]))
        return reply

    def _token(self, headers: dict[str, str]) -> str:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        return value.strip() if scheme.lower() == "bearer" else ""
