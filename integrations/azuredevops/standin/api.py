"""A local Azure DevOps organisation on loopback: the REST 7.1 calls Resolver makes, in Azure
DevOps's shapes, at Microsoft's path templates (which `conformance` checks against the
published descriptions).

    api = AzureDevOpsAPI()                       # organisation `contoso` at api.url
    bot = api.add_person("resolver@contoso.com", token="bot-pat")
    repo = api.add_repo("Widgets/widgets", clone_url=git.url_for("Widgets/widgets"))
    api.allow(repo, alice)                       # alice may contribute
    api.fail(f"POST {GIT}/pullrequests", 503)     # GIT: the repository's path template
    ... point the client at api.url ...
    api.requests                                 # what it was sent

Every call needs a token it knows: a PAT as Basic (any user), or an access token as Bearer
(Entra's, from `oauth`). A list answers as Azure DevOps does, `{"count": n, "value": [...]}`.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from integrations.azuredevops.standin.handlers import ROUTES
from integrations.azuredevops.standin.oauth import ENTRA_ROUTES, EntraApps
from integrations.azuredevops.standin.state import (
    BuildRun,
    Comment,
    NotFoundError,
    Person,
    Pull,
    Repo,
    Subscription,
    Thread,
    WorkItemComment,
    identity_ref,
)
from integrations.standin.git_http import IDENTITY, run_git
from integrations.standin.server import Reply, RestStandIn, Routed

ORGANISATION = "contoso"


@dataclass(frozen=True)
class Answered:
    """A successful answer as it went out, for the conformance checks."""

    method: str
    path: str
    body: Any


class AzureDevOpsAPI(RestStandIn):
    METHODS: ClassVar[frozenset[str]] = frozenset({"GET", "POST", "PATCH", "PUT", "DELETE"})
    NOT_FOUND: ClassVar[Any] = {
        "$id": "1",
        "message": "The resource cannot be found.",
        "typeKey": "NotFoundException",
        "errorCode": 0,
    }
    WEB_ROUTES = ENTRA_ROUTES
    TEXT_BODIES: ClassVar[tuple[type[str] | type[bytes], ...]] = (str,)  # a build's log

    def __init__(self) -> None:
        self.people: dict[str, Person] = {}
        self.tokens: dict[str, str] = {}  # token -> identity id
        self.repos: dict[str, Repo] = {}
        self.projects: dict[str, str] = {}  # name -> id
        self.pulls: list[Pull] = []
        self.work_items: dict[tuple[str, int], list[WorkItemComment]] = {}
        self.subscriptions: dict[str, Subscription] = {}
        self.builds: dict[int, BuildRun] = {}
        self.answers: list[Answered] = []
        self.statuses: list[tuple[int, str, str]] = []  # (thread, status, who set it)
        self.entra = EntraApps()
        self.ids = itertools.count(1)
        super().__init__(ROUTES)

    # --- set-up and inspection from tests
    @property
    def login_url(self) -> str:
        """Entra's authority (`https://login.microsoftonline.com`); the tenant is TENANT."""
        return self.origin

    @property
    def url(self) -> str:
        """The organisation's address (`https://dev.azure.com/contoso` on the service)."""
        return f"{self.origin}/{ORGANISATION}"

    def add_person(self, unique_name: str, *, token: str | None = None) -> Person:
        found = next((p for p in self.people.values() if p.unique_name == unique_name), None)
        if found is None:
            name = unique_name.split("@", 1)[0]
            found = Person(str(uuid.uuid4()), unique_name, name.title())
            self.people[found.id] = found
        if token is not None:
            self.tokens[token] = found.id
        return found

    def add_repo(self, full_name: str, clone_url: str, **options: Any) -> Repo:
        project, name = full_name.split("/", 1)
        project_id = self.projects.setdefault(project, str(uuid.uuid4()))
        repo = Repo(str(uuid.uuid4()), project, project_id, name, clone_url, **options)
        self.repos[full_name] = repo
        return repo

    def allow(self, repo: Repo, person: Person, *, contribute: bool = True) -> None:
        (repo.contributors if contribute else repo.readers).add(person.id)

    def add_pull(self, repo: Repo, source: str, author: Person, **options: Any) -> Pull:
        pull = Pull(
            next(self.ids),
            repo,
            f"refs/heads/{source}",
            f"refs/heads/{options.pop('target', repo.default_branch)}",
            options.pop("title", "A change"),
            options.pop("description", ""),
            author.id,
            **options,
        )
        self.pulls.append(pull)
        return pull

    def keep_merge(self, pull: Pull, bare: Path, source: str) -> str:
        """Azure Repos' merge of a pull request, as it makes one on every push to it: a merge
        commit of the target's head and `source` (the source's head, whose tree it takes, as when
        the target has not moved), kept in the target repository as refs/pull/N/merge; the
        merge commit."""
        git = ("--git-dir", str(bare))
        target = run_git(*git, "rev-parse", "--verify", pull.target).strip()
        parents = ("-p", target, "-p", source)
        message = ("-m", f"Merged PR {pull.id}")
        merge = run_git(*IDENTITY, *git, "commit-tree", f"{source}^{{tree}}", *parents, *message)
        run_git(*git, "update-ref", f"refs/pull/{pull.id}/merge", merge.strip())
        pull.merge = (merge.strip(), source, target)
        return merge.strip()

    def add_thread(
        self, pull: Pull, author: Person, text: str, *, context: dict[str, Any] | None = None
    ) -> Thread:
        """A new active thread on `pull` with `author`'s comment `text` (on a line of the diff
        with a `context`)."""
        thread = Thread(next(self.ids), [Comment(next(self.ids), 0, author.id, text)])
        thread.context = context
        pull.threads.append(thread)
        return thread

    def add_reply(self, thread: Thread, author: Person, text: str) -> Comment:
        """`author`'s reply `text` at the end of `thread`."""
        comment = Comment(next(self.ids), thread.comments[0].id, author.id, text)
        thread.comments.append(comment)
        return comment

    def add_build(self, project: str, failed: list[tuple[str, str, str]]) -> BuildRun:
        """A failed build of `project`: each failed task as (name, error, log text)."""
        run = BuildRun(next(self.ids), project, str(uuid.uuid4()), failed)
        self.builds[run.id] = run
        return run

    def add_work_item(self, project: str, number: int) -> None:
        self.work_items.setdefault((project, number), [])

    def said(self, person: Person) -> list[str]:
        """What `person` wrote in pull request threads and on work items, in order."""
        threads = [
            (c.id, c.content)
            for p in self.pulls
            for t in p.threads
            for c in t.comments
            if c.author == person.id
        ]
        items = [
            (c.id, c.text)
            for found in self.work_items.values()
            for c in found
            if c.author == person.id
        ]
        return [text for _, text in sorted(threads + items)]

    # --- what the handlers ask
    def ref(self, identity_id: str) -> dict[str, Any]:
        return identity_ref(self.people[identity_id], self.url)

    def repo_of(self, params: dict[str, str]) -> Repo:
        project, name = unquote(params["project"]), unquote(params["repositoryId"])
        found = next(
            (
                r
                for r in self.repos.values()
                if project in (r.project, r.project_id) and name in (r.name, r.id)
            ),
            None,
        )
        if found is None:
            raise NotFoundError(name)
        return found

    def pull_of(self, params: dict[str, str]) -> Pull:
        repo, number = self.repo_of(params), int(params["pullRequestId"])
        found = next((p for p in self.pulls if (p.repo, p.id) == (repo, number)), None)
        if found is None:
            raise NotFoundError(str(number))
        return found

    # --- the server's side
    def fault_body(self, status: int) -> Any:
        return {"message": "Service Unavailable" if status >= 500 else "Failed", "errorCode": 0}

    def serve(self, call: Routed) -> Reply:
        """Every route needs a known token and its organisation; a missing thing is a 404."""
        identity = self.tokens.get(self._token(call.headers))
        if identity is None:
            return 401, {"message": "TF400813: not authorized"}, {}
        if call.params.get("organization", ORGANISATION) != ORGANISATION:
            return 404, self.NOT_FOUND, {}
        try:
            return ROUTES[call.route](self, call, identity)
        except NotFoundError:
            return 404, self.NOT_FOUND, {}

    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw: bytes) -> Reply:
        reply = super().handle(method, raw_path, headers, raw)
        if reply[0] < 300:
            with self.lock:
                self.answers.append(Answered(method, urlsplit(raw_path).path, reply[1]))
        return reply

    def _token(self, headers: dict[str, str]) -> str:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer":
            return value.strip()
        if scheme.lower() != "basic":
            return ""
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return ""
        return decoded.partition(":")[2]
