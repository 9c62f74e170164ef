"""A local Forgejo (or Gitea) on loopback: the REST API below `/api/v1` that Resolver calls, and
the instance's OAuth2 provider, in Forgejo's shapes.

    api = ForgejoAPI()
    api.add_token("bot-token", "resolver", admin=False)      # a token and the user it acts as
    repo = api.add_repo("forgejo/widgets", clone_url=git.url_for("forgejo/widgets"))
    api.add_collaborator(repo, "alice", "write")
    api.add_issue(repo, 7)
    api.fail("POST /repos/{owner}/{repo}/pulls", 502, times=2)   # the next two calls fail
    ... point the client at api.url ...
    api.requests, api.answers                                   # what it was sent and answered

Every API call needs a token it knows (`Authorization: token …` or `Bearer …`). Routes are
Forgejo's path templates; `conformance` checks requests and answers against the published API
description. The OAuth2 flow (`/login/oauth/…`, outside `requests`) is in `oauth`; the
handlers are in `handlers`, the records and their JSON in `state`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

from integrations.forgejo.standin.handlers import ROUTES, Call
from integrations.forgejo.standin.oauth import OAUTH_ROUTES, OAuthApps
from integrations.forgejo.standin.reviews import Review, ReviewComment
from integrations.forgejo.standin.state import MODES, Comment, Hook, Pull, Reaction, Repo, error
from integrations.forgejo.standin.state import user_json as render_user
from integrations.standin.server import Reply, RestStandIn, Routed

API_PREFIX = "/api/v1"


class NotFoundError(Exception):
    """A path's repository, comment or pull request does not exist (or is hidden): 404."""


@dataclass(frozen=True)
class Answered:
    """A successful answer as it went out, for the conformance checks."""

    method: str
    path: str
    body: Any


class ForgejoAPI(RestStandIn):
    """The stand-in's state and behaviour; the HTTP server starts in `__init__`."""

    METHODS: ClassVar[frozenset[str]] = frozenset({"GET", "POST", "PATCH", "DELETE"})
    NOT_FOUND: ClassVar[Any] = {"message": "The target couldn't be found.", "errors": []}
    WEB_ROUTES = OAUTH_ROUTES

    def __init__(self) -> None:
        self.users: dict[int, str] = {}
        self.admins: set[int] = set()
        self.tokens: dict[str, int] = {}  # token -> the user it acts as
        self.repos: dict[str, Repo] = {}
        self.orgs: dict[str, set[str]] = {}  # org -> its owners' logins
        self.comments: dict[int, Comment] = {}
        self.pulls: list[Pull] = []
        self.reactions: list[Reaction] = []
        self.hooks: dict[int, Hook] = {}
        self.reviews: list[Review] = []
        self.answers: list[Answered] = []
        self.oauth = OAuthApps()
        self._ids = iter(range(100_001, 10**9))
        super().__init__(ROUTES, API_PREFIX, prefix_required=True)

    # --- set-up and inspection from tests
    @property
    def url(self) -> str:
        """The instance URL; the API is below `/api/v1`."""
        return self.origin

    def add_user(self, login: str, *, admin: bool = False) -> int:
        """A user (the same id for the same login); `admin`: a site administrator."""
        user_id = next((i for i, name in self.users.items() if name == login), None)
        if user_id is None:
            user_id = self.new_id()
            self.users[user_id] = login
        if admin:
            self.admins.add(user_id)
        return user_id

    def add_token(self, token: str, login: str, *, admin: bool = False) -> int:
        """A token the API accepts, acting as `login`; returns the user's id."""
        user_id = self.add_user(login, admin=admin)
        self.tokens[token] = user_id
        return user_id

    def add_repo(self, full_name: str, clone_url: str, **options: Any) -> Repo:
        repo = Repo(self.new_id(), full_name, clone_url, **options)
        self.add_user(repo.owner)
        self.repos[full_name] = repo
        return repo

    def add_collaborator(self, repo: Repo, login: str, mode: str) -> None:
        """`login` may `read`, `write` or `admin` the repository."""
        self.add_user(login)
        repo.collaborators[login] = mode

    def add_org(self, org: str, *owners: str) -> None:
        self.orgs[org] = set(owners)
        for owner in owners:
            self.add_user(owner)

    def add_issue(self, repo: Repo, number: int) -> None:
        repo.issues.add(number)

    def add_comment(self, repo: Repo, number: int, body: str, author: str) -> Comment:
        repo.issues.add(number)
        comment = Comment(self.new_id(), repo.full_name, number, body, self.add_user(author))
        self.comments[comment.id] = comment
        return comment

    def add_pull(self, repo: Repo, head: str, title: str = "A change", **options: Any) -> Pull:
        number = 1 + max(repo.issues, default=0)
        repo.issues.add(number)
        author = self.add_user(options.pop("author", "someone"))
        base = options.pop("base", repo.default_branch)
        pull = Pull(number, repo.full_name, head, base, title, "", author, **options)
        self.pulls.append(pull)
        return pull

    def add_review(
        self, pull: Pull, author: str, comments: list[tuple[str, int, str]], **options: Any
    ) -> Review:
        """A submitted review of `pull` with its comments: (path, line, body) each, a
        negative line on the old side."""
        user_id = self.add_user(author)
        made = [ReviewComment(self.new_id(), p, n, b, user_id) for p, n, b in comments]
        review = Review(self.new_id(), pull.repo, pull.number, user_id, comments=made, **options)
        self.reviews.append(review)
        return review

    def add_reply(self, review: Review, author: str, path: str, line: int, body: str) -> None:
        """A reply in a thread: Forgejo keeps it as a comment of the review on that line."""
        review.comments.append(
            ReviewComment(self.new_id(), path, line, body, self.add_user(author))
        )

    def new_id(self) -> int:
        return next(self._ids)

    # --- what the handlers ask
    def user(self, user_id: int) -> dict[str, Any]:
        return render_user(user_id, self.users.get(user_id, "Ghost"), self.origin)

    def user_id(self, login: str) -> int:
        return self.add_user(login)

    def is_admin(self, user_id: int) -> bool:
        return user_id in self.admins

    def mode(self, repo: Repo, login: str) -> int:
        """`login`'s access to `repo` as an index of MODES: the owner and an organisation's
        owners own it, a collaborator has their mode, anyone may read a public one."""
        if login == repo.owner or login in self.orgs.get(repo.owner, set()):
            return MODES.index("owner")
        if login in repo.collaborators:
            return MODES.index(repo.collaborators[login])
        return MODES.index("none" if repo.private else "read")

    def can(self, repo: Repo, login: str, mode: str) -> bool:
        return self.mode(repo, login) >= MODES.index(mode)

    def refuse(self, status: int, message: str) -> Reply:
        return status, error(message, self.origin), {}

    def repo_of(self, call: Call) -> Repo:
        full_name = f"{call.params['owner']}/{call.params['repo']}"
        repo = self.repos.get(full_name)
        if repo is None or self.mode(repo, self.users[call.user_id]) == 0:
            raise NotFoundError(full_name)
        return repo

    def comment_of(self, call: Call) -> Comment:
        repo = self.repo_of(call)
        comment = self.comments.get(int(call.params["id"]))
        if comment is None or comment.repo != repo.full_name:
            raise NotFoundError(call.params["id"])
        return comment

    def pull_of(self, call: Call) -> Pull:
        repo, number = self.repo_of(call), int(call.params["index"])
        found = next(
            (p for p in self.pulls if (p.repo, p.number) == (repo.full_name, number)), None
        )
        if found is None:
            raise NotFoundError(str(number))
        return found

    # --- the server's side
    def fault_body(self, status: int) -> Any:
        return error("Internal Server Error" if status >= 500 else "Failed", self.origin)

    def serve(self, call: Routed) -> Reply:
        """Every route needs a known token; a path to nothing the user may see is a 404."""
        user_id = self.tokens.get(self._token(call.headers))
        if user_id is None or self.oauth.expired(self._token(call.headers)):
            return self.refuse(401, "token is required")
        try:
            return ROUTES[call.route](self, Call(call, user_id))
        except NotFoundError:
            return 404, self.NOT_FOUND, {}

    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw: bytes) -> Reply:
        reply = super().handle(method, raw_path, headers, raw)
        path = urlsplit(raw_path).path
        if path.startswith(API_PREFIX) and reply[0] < 300:
            with self.lock:
                self.answers.append(Answered(method, path.removeprefix(API_PREFIX), reply[1]))
        return reply

    def _token(self, headers: dict[str, str]) -> str:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        return value.strip() if scheme.lower() in ("token", "bearer") else ""
