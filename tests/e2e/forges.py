"""The forge an end-to-end test runs against, behind one face. A test that holds for GitHub and
GitLab alike takes the `forge` fixture (both, by default; `indirect` parametrisation picks
one, or adds Forgejo: `EVERY_FORGE`) and asks it what differs: the stand-in and its settings,
how a delivery is made, signed and sent, and what the stand-in recorded."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from integrations.azuredevops.standin.api import AzureDevOpsAPI
from integrations.azuredevops.standin.state import Pull as AzurePull
from integrations.azuredevops.standin.state import Repo as AzureRepo
from integrations.bitbucket.standin.api import BitbucketAPI
from integrations.bitbucket.standin.state import Pull as BitbucketPull
from integrations.bitbucket.standin.state import Repo as BitbucketRepo
from integrations.forgejo.standin.api import ForgejoAPI
from integrations.forgejo.standin.state import Pull, Repo
from integrations.github.standin.api import BOT_LOGIN, GitHubAPI
from integrations.gitlab.standin.api import GitLabAPI, MergeRequest, Project
from integrations.standin.git_http import GitHttpServer
from tests.e2e import github_flow, gitlab_flow
from tests.e2e.stack import REPO_FILES, Stack, ingress
from tests.integrations.azuredevops import flow as azure_flow
from tests.integrations.bitbucket import flow as bitbucket_flow
from tests.integrations.deliveries import Delivery, github, gitlab, load, post
from tests.integrations.forgejo import flow as forgejo_flow
from tests.integrations.github.conftest import INSTALLATION_ID, REPO

FORGES = ("github", "gitlab")
# The suites Forgejo runs too (`indirect` parametrisation): it has no CI whose logs Resolver
# reads and no API to resolve a review thread, so the others stay on the two.
EVERY_FORGE = (*FORGES, "forgejo")
# The suites on the bot's own pull request run on Bitbucket and Azure DevOps too: Bitbucket
# has no issues to mention the bot on and no reactions; an Azure DevOps "issue" is a work item,
# which names no repository and gets no `Fixes #N` or 👀. The mention suite stays on the others.
PULL_FORGES = (*EVERY_FORGE, "bitbucket", "azuredevops")
ISSUE = gitlab_flow.IID  # the issue alice asks on: 7, on either forge


@dataclass(frozen=True)
class Opened:
    """A pull as the forge shows it."""

    head: str
    base: str
    draft: bool
    description: str
    url: str


class Forge(Protocol):
    """What an end-to-end test needs of a forge; a "pull" is a GitHub pull request or a GitLab
    merge request, numbered as the forge numbers them."""

    name: str
    pull_word: str  # what the bot's comments call a pull
    token_marker: str  # what the bot's token would look like in a log

    def settings(self) -> dict[str, str]:
        """The stack's settings for this forge."""
        ...

    def widgets(self, files: Mapping[str, str] = REPO_FILES) -> Path:
        """The repository with `files` on main, where alice may push; its bare repository."""
        ...

    def start(self, stack: Stack) -> None:
        """alice linked, the bot able to act, and a worker running."""
        ...

    def mention_on_issue(self, stack: Stack, monkeypatch: pytest.MonkeyPatch, text: str) -> int:
        """alice's comment `text` on issue 7, delivered; the job id once it and its callbacks
        ended."""
        ...

    def only_pull(self) -> tuple[int, str]:
        """The one pull the forge has: its number and its branch."""
        ...

    def bots_pull(self, branch: str) -> int:
        """The bot's own open pull from `branch` (which exists) into main; its number."""
        ...

    def comment_on_pull(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, text: str
    ) -> int:
        """alice's comment `text` on pull `number`, delivered; the job id once it and its
        callbacks ended."""
        ...

    def push(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, ref: str, after: str
    ) -> int | None:
        """The forge's push delivery for `ref` now at `after`; the job id once it and its
        callbacks ended, or None when it answered 204."""
        ...

    def said_on_pull(self, number: int) -> list[str]:
        """What the bot wrote in the conversation of pull `number`, in order."""
        ...

    def said_on_issue(self) -> list[str]:
        """What the bot wrote on issue 7, in order."""
        ...

    def status_edits(self) -> list[int]:
        """The stand-in's answer to each edit of a comment the bot made."""
        ...

    def reactions_on_request(self) -> list[str]:
        """The bot's reactions on alice's comment that asked it."""
        ...

    def opened(self, number: int) -> Opened: ...

    def pull_count(self) -> int: ...

    def api_calls(self) -> int:
        """How many calls the stand-in has answered."""
        ...

    def open_pull_listings(self) -> list[tuple[str, int]]:
        """Each listing of open pulls into a base: the base, and the stand-in's answer."""
        ...


def deliver(stack: Stack, monkeypatch: pytest.MonkeyPatch, delivery: Delivery) -> int | None:
    """Send `delivery` to the ingress: None when it answered 204, else the job id once it and
    its callbacks ended."""
    answer = post(ingress(stack, monkeypatch), delivery)
    if answer.status_code == 204:
        return None
    assert answer.status_code == 202, answer.text
    job_id = int(answer.json()["job_id"])
    stack.wait_finished(job_id)
    stack.wait_callbacks_settled(job_id)
    return job_id


def ended(job_id: int | None) -> int:
    assert job_id is not None, "the delivery made no job"
    return job_id


@dataclass
class GitHubForge:
    api: GitHubAPI
    git: GitHttpServer
    key_file: Path
    name: str = "github"
    pull_word: str = "pull request"
    token_marker: str = "x-access-token"

    def settings(self) -> dict[str, str]:
        return github_flow.github_settings(self.api, self.key_file)

    def widgets(self, files: Mapping[str, str] = REPO_FILES) -> Path:
        return github_flow.widgets(self.api, self.git, files)[1]

    def start(self, stack: Stack) -> None:
        stack.link("alice", "github", str(github_flow.ALICE_ID), "alice")
        stack.start_worker()

    def mention_on_issue(self, stack: Stack, monkeypatch: pytest.MonkeyPatch, text: str) -> int:
        payload = github_flow.issue_comment(self.api, self.git, text, number=ISSUE)
        return ended(deliver(stack, monkeypatch, github("issue_comment.created", payload)))

    def only_pull(self) -> tuple[int, str]:
        [pull] = self.api.pulls
        return pull.number, pull.head

    def bots_pull(self, branch: str) -> int:
        return self.api.add_pull(REPO, branch, "main", "add() subtracts", BOT_LOGIN).number

    def comment_on_pull(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, text: str
    ) -> int:
        payload = github_flow.issue_comment(
            self.api, self.git, text, number=number, pull_request=True
        )
        return ended(deliver(stack, monkeypatch, github("issue_comment.created", payload)))

    def push(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, ref: str, after: str
    ) -> int | None:
        payload: dict[str, Any] = copy.deepcopy(load("github", "push__branch"))
        payload.update(ref=ref, after=after, deleted=False, created=False)
        payload["repository"].update(
            full_name=REPO,
            name=REPO.split("/")[1],
            clone_url=self.git.url_for(REPO),
            default_branch="main",
        )
        payload["installation"] = {"id": INSTALLATION_ID}
        return deliver(stack, monkeypatch, github("push", payload))

    def said_on_pull(self, number: int) -> list[str]:
        return [
            c.body for c in self.api.comments.values() if (c.login, c.number) == (BOT_LOGIN, number)
        ]

    def said_on_issue(self) -> list[str]:
        return self.said_on_pull(ISSUE)  # issues and pull requests are numbered as one

    def status_edits(self) -> list[int]:
        edits = self.api.calls("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}")
        return [r.status for r in edits]

    def reactions_on_request(self) -> list[str]:
        [request] = [c for c in self.api.comments.values() if c.login == "alice"]
        return [emoji for login, emoji in request.reactions if login == BOT_LOGIN]

    def opened(self, number: int) -> Opened:
        [pull] = [p for p in self.api.pulls if p.number == number]
        url = f"{self.api.web_url}/{REPO}/pull/{number}"
        return Opened(pull.head, pull.base, pull.draft, pull.body, url)

    def pull_count(self) -> int:
        return len(self.api.pulls)

    def api_calls(self) -> int:
        return len(self.api.requests)

    def open_pull_listings(self) -> list[tuple[str, int]]:
        listings = self.api.calls("GET /repos/{owner}/{repo}/pulls")
        return [
            (r.query["base"][0], r.status)
            for r in listings
            if r.query.get("state") == ["open"] and "base" in r.query
        ]


@dataclass
class GitLabForge:
    api: GitLabAPI
    git: GitHttpServer
    name: str = "gitlab"
    pull_word: str = "merge request"
    token_marker: str = gitlab_flow.BOT_TOKEN
    merge_requests: dict[int, MergeRequest] = field(default_factory=dict)
    _project: Project | None = None

    @property
    def project(self) -> Project:
        assert self._project is not None, "widgets() makes the project"
        return self._project

    def settings(self) -> dict[str, str]:
        return gitlab_flow.gitlab_settings(self.api)

    def widgets(self, files: Mapping[str, str] = REPO_FILES) -> Path:
        self._project, bare = gitlab_flow.widgets(self.api, self.git, files)
        return bare

    def start(self, stack: Stack) -> None:
        stack.link("alice", "gitlab", str(self.api.add_user("alice")), "alice")
        gitlab_flow.store_bot_token(self.api)
        stack.start_worker()

    def mention_on_issue(self, stack: Stack, monkeypatch: pytest.MonkeyPatch, text: str) -> int:
        payload = gitlab_flow.note_hook(self.api, self.project, text)
        return ended(deliver(stack, monkeypatch, gitlab("Note Hook", payload)))

    def only_pull(self) -> tuple[int, str]:
        [merge_request] = self.api.merge_requests
        self.merge_requests[merge_request.iid] = merge_request
        return merge_request.iid, merge_request.source_branch

    def bots_pull(self, branch: str) -> int:
        bot = self.api.add_user(gitlab_flow.BOT)
        merge_request = self.api.add_merge_request(self.project, branch, "Fix add()", author=bot)
        self.merge_requests[merge_request.iid] = merge_request
        return merge_request.iid

    def comment_on_pull(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, text: str
    ) -> int:
        merge_request = self.merge_requests[number]
        payload = gitlab_flow.merge_request_note(
            self.api, self.project, merge_request, text, "alice"
        )
        return ended(deliver(stack, monkeypatch, gitlab("Note Hook", payload)))

    def push(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, ref: str, after: str
    ) -> int | None:
        payload: dict[str, Any] = load("gitlab", "Push_Hook__branch")
        payload.update(
            ref=ref,
            after=after,
            checkout_sha=after,
            user_id=self.api.add_user("alice"),
            user_username="alice",
            user_name="Alice",
            project_id=self.project.id,
        )
        payload["project"].update(
            id=self.project.id,
            path_with_namespace=gitlab_flow.PROJECT,
            git_http_url=self.project.clone_url,
            default_branch=self.project.default_branch,
            web_url=f"{self.api.url}/{gitlab_flow.PROJECT}",
        )
        return deliver(stack, monkeypatch, gitlab("Push Hook", payload))

    def said_on_pull(self, number: int) -> list[str]:
        return gitlab_flow.bot_notes_on(self.api, number)

    def said_on_issue(self) -> list[str]:
        bot = self.api.add_user(gitlab_flow.BOT)
        on_issue = ("issues", ISSUE)
        return [
            n.body
            for n in self.api.notes.values()
            if (n.kind, n.iid) == on_issue and n.author == bot
        ]

    def status_edits(self) -> list[int]:
        return [r.status for r in self.api.calls("PUT /projects/{id}/issues/{iid}/notes/{note_id}")]

    def reactions_on_request(self) -> list[str]:
        bot = self.api.add_user(gitlab_flow.BOT)
        [request] = [n for n in self.api.notes.values() if n.body.startswith("@resolver")]
        return [emoji for user, emoji in request.awards if user == bot]

    def opened(self, number: int) -> Opened:
        [mr] = [m for m in self.api.merge_requests if m.iid == number]
        draft = mr.draft and mr.title.startswith("Draft: ")
        url = f"{self.api.url}/{gitlab_flow.PROJECT}/-/merge_requests/{number}"
        return Opened(mr.source_branch, mr.target_branch, draft, mr.description, url)

    def pull_count(self) -> int:
        return len(self.api.merge_requests)

    def api_calls(self) -> int:
        return len(self.api.requests)

    def open_pull_listings(self) -> list[tuple[str, int]]:
        listings = self.api.calls("GET /projects/{id}/merge_requests")
        return [
            (r.query["target_branch"][0], r.status)
            for r in listings
            if r.query.get("state") == ["opened"] and "target_branch" in r.query
        ]


@dataclass
class ForgejoForge:
    api: ForgejoAPI
    git: GitHttpServer
    name: str = "forgejo"
    pull_word: str = "pull request"
    token_marker: str = forgejo_flow.BOT_TOKEN
    _repo: Repo | None = None

    @property
    def repo(self) -> Repo:
        assert self._repo is not None, "widgets() makes the repository"
        return self._repo

    def settings(self) -> dict[str, str]:
        return forgejo_flow.settings(self.api)

    def widgets(self, files: Mapping[str, str] = REPO_FILES) -> Path:
        self._repo, bare = forgejo_flow.widgets(self.api, self.git, files)
        return bare

    def start(self, stack: Stack) -> None:
        stack.link("alice", "forgejo", str(self.api.user_id("alice")), "alice")
        stack.start_worker()

    def mention_on_issue(self, stack: Stack, monkeypatch: pytest.MonkeyPatch, text: str) -> int:
        payload = forgejo_flow.mention(self.api, self.repo, "alice", text)
        sent = forgejo_flow.delivery(payload, "issue_comment")
        return ended(deliver(stack, monkeypatch, sent))

    def only_pull(self) -> tuple[int, str]:
        [pull] = self.api.pulls
        return pull.number, pull.head

    def bots_pull(self, branch: str) -> int:
        return self.api.add_pull(self.repo, branch, "Fix add()", author=forgejo_flow.BOT).number

    def _pull(self, number: int) -> Pull:
        [pull] = [p for p in self.api.pulls if p.number == number]
        return pull

    def comment_on_pull(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, text: str
    ) -> int:
        payload = forgejo_flow.pull_comment(self.api, self.repo, self._pull(number), "alice", text)
        sent = forgejo_flow.delivery(payload, "pull_request_comment")
        return ended(deliver(stack, monkeypatch, sent))

    def push(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, ref: str, after: str
    ) -> int | None:
        payload = forgejo_flow.push(self.api, self.repo, ref, after, "alice")
        return deliver(stack, monkeypatch, forgejo_flow.delivery(payload, "push"))

    def said_on_pull(self, number: int) -> list[str]:
        return forgejo_flow.said(self.api, number)

    def said_on_issue(self) -> list[str]:
        return forgejo_flow.said(self.api, ISSUE)

    def status_edits(self) -> list[int]:
        return [r.status for r in self.api.calls(forgejo_flow.STATUS_EDIT)]

    def reactions_on_request(self) -> list[str]:
        bot = self.api.user_id(forgejo_flow.BOT)
        alice = self.api.user_id("alice")
        asked = {c.id for c in self.api.comments.values() if c.user_id == alice}
        return [r.content for r in self.api.reactions if r.user_id == bot and r.comment_id in asked]

    def opened(self, number: int) -> Opened:
        pull = self._pull(number)
        url = f"{self.api.url}/{forgejo_flow.REPO}/pulls/{number}"
        return Opened(pull.head, pull.base, pull.draft, pull.body, url)

    def pull_count(self) -> int:
        return len(self.api.pulls)

    def api_calls(self) -> int:
        return len(self.api.requests)

    def open_pull_listings(self) -> list[tuple[str, int]]:
        """Forgejo lists open pulls without a base (the client keeps those into it): each
        listing as `*`."""
        listings = self.api.calls("GET /repos/{owner}/{repo}/pulls")
        return [("*", r.status) for r in listings if r.query.get("state") == ["open"]]


@dataclass
class BitbucketForge:
    api: BitbucketAPI
    git: GitHttpServer
    name: str = "bitbucket"
    pull_word: str = "pull request"
    token_marker: str = bitbucket_flow.BOT_TOKEN
    _repo: BitbucketRepo | None = None
    _bare: Path | None = None

    @property
    def repo(self) -> BitbucketRepo:
        assert self._repo is not None, "widgets() makes the repository"
        return self._repo

    def settings(self) -> dict[str, str]:
        return bitbucket_flow.settings(self.api)

    def widgets(self, files: Mapping[str, str] = REPO_FILES) -> Path:
        self._repo, self._bare = bitbucket_flow.widgets(self.api, self.git, files)
        return self._bare

    def start(self, stack: Stack) -> None:
        stack.link("alice", "bitbucket", self.api.add_user("alice"), "alice")
        stack.start_worker()

    def mention_on_issue(self, stack: Stack, monkeypatch: pytest.MonkeyPatch, text: str) -> int:
        """Bitbucket has no issues: alice's comment on her pull request that reports the bug."""
        assert self._bare is not None, "widgets() makes the repository"
        asked = bitbucket_flow.asking_pull(self.api, self.repo, self._bare)
        return self.comment_on_pull(stack, monkeypatch, asked.id, text)

    def only_pull(self) -> tuple[int, str]:
        [pull] = [p for p in self.api.pulls if p.author == self.api.add_user(bitbucket_flow.BOT)]
        return pull.id, pull.head

    def bots_pull(self, branch: str) -> int:
        return self.api.add_pull(self.repo, branch, "Fix add()", author=bitbucket_flow.BOT).id

    def _pull(self, number: int) -> BitbucketPull:
        [pull] = [p for p in self.api.pulls if p.id == number]
        return pull

    def comment_on_pull(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, text: str
    ) -> int:
        payload = bitbucket_flow.comment(self.api, self._pull(number), "alice", text)
        sent = bitbucket_flow.delivery(payload, "pullrequest:comment_created")
        return ended(deliver(stack, monkeypatch, sent))

    def push(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, ref: str, after: str
    ) -> int | None:
        payload = bitbucket_flow.push(self.api, ref, after, "alice")
        return deliver(stack, monkeypatch, bitbucket_flow.delivery(payload, "repo:push"))

    def said_on_pull(self, number: int) -> list[str]:
        return bitbucket_flow.said(self.api, number)

    def said_on_issue(self) -> list[str]:
        return []

    def status_edits(self) -> list[int]:
        return [r.status for r in self.api.calls(bitbucket_flow.STATUS_EDIT)]

    def reactions_on_request(self) -> list[str]:
        return []  # Bitbucket has no reactions

    def opened(self, number: int) -> Opened:
        pull = self._pull(number)
        url = f"{self.api.url}/{bitbucket_flow.REPO}/pull-requests/{number}"
        return Opened(pull.head, pull.base, pull.draft, pull.description, url)

    def pull_count(self) -> int:
        return len(self.api.pulls)

    def api_calls(self) -> int:
        return len(self.api.requests)

    def open_pull_listings(self) -> list[tuple[str, int]]:
        """Bitbucket lists open pulls without a base (the client keeps those into it)."""
        listings = self.api.calls("GET /repositories/{workspace}/{repo_slug}/pullrequests")
        return [("*", r.status) for r in listings if r.query.get("state") == ["OPEN"]]


@dataclass
class AzureDevOpsForge:
    """Its pulls are numbered by the stand-in; `mention_on_issue` asks on work item 7 with
    `repo=` (a work item names no repository)."""

    api: AzureDevOpsAPI
    git: GitHttpServer
    name: str = "azuredevops"
    pull_word: str = "pull request"
    token_marker: str = azure_flow.BOT_TOKEN
    _repo: AzureRepo | None = None

    @property
    def repo(self) -> AzureRepo:
        assert self._repo is not None, "widgets() makes the repository"
        return self._repo

    def _person(self, name: str) -> Any:
        return self.api.add_person(f"{name}@contoso.com")

    def settings(self) -> dict[str, str]:
        return azure_flow.settings(self.api)

    def widgets(self, files: Mapping[str, str] = REPO_FILES) -> Path:
        self._repo, bare = azure_flow.widgets(self.api, self.git, files)
        return bare

    def start(self, stack: Stack) -> None:
        stack.link("alice", "azuredevops", self._person("alice").id, "alice")
        stack.start_worker()

    def mention_on_issue(self, stack: Stack, monkeypatch: pytest.MonkeyPatch, text: str) -> int:
        payload = azure_flow.work_item_mention(
            self.api, self._person("alice"), f"{text} repo={azure_flow.REPO}"
        )
        return ended(deliver(stack, monkeypatch, azure_flow.delivery(payload)))

    def only_pull(self) -> tuple[int, str]:
        [pull] = self.api.pulls
        return pull.id, pull.source.removeprefix("refs/heads/")

    def bots_pull(self, branch: str) -> int:
        author = self.api.add_person(azure_flow.BOT)
        return self.api.add_pull(self.repo, branch, author, title="Fix add()").id

    def _pull(self, number: int) -> AzurePull:
        [pull] = [p for p in self.api.pulls if p.id == number]
        return pull

    def comment_on_pull(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, number: int, text: str
    ) -> int:
        alice, pull = self._person("alice"), self._pull(number)
        payload = azure_flow.pull_comment(self.api, self.repo, pull, alice, text)
        return ended(deliver(stack, monkeypatch, azure_flow.delivery(payload)))

    def push(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch, ref: str, after: str
    ) -> int | None:
        payload = azure_flow.push(self.api, self.repo, ref, after, self._person("alice"))
        return deliver(stack, monkeypatch, azure_flow.delivery(payload))

    def said_on_pull(self, number: int) -> list[str]:
        bot = self.api.add_person(azure_flow.BOT).id
        pull = self._pull(number)
        return [c.content for t in pull.threads for c in t.comments if c.author == bot]

    def said_on_issue(self) -> list[str]:
        bot = self.api.add_person(azure_flow.BOT).id
        items = self.api.work_items[(azure_flow.PROJECT, azure_flow.WORK_ITEM)]
        return [c.text for c in items if c.author == bot]

    def status_edits(self) -> list[int]:
        calls = self.api.calls(azure_flow.STATUS_EDIT) + self.api.calls(azure_flow.THREAD_EDIT)
        return [r.status for r in calls]

    def reactions_on_request(self) -> list[str]:
        """A like is Azure Repos' only reaction: `eyes` stands for it."""
        bot = self.api.add_person(azure_flow.BOT).id
        liked = [c for p in self.api.pulls for t in p.threads for c in t.comments if bot in c.likes]
        return ["eyes"] * len(liked)

    def opened(self, number: int) -> Opened:
        pull = self._pull(number)
        url = f"{self.api.url}/{azure_flow.REPO.replace('/', '/_git/')}/pullrequest/{number}"
        head, base = (
            pull.source.removeprefix("refs/heads/"),
            pull.target.removeprefix("refs/heads/"),
        )
        return Opened(head, base, pull.is_draft, pull.description, url)

    def pull_count(self) -> int:
        return len(self.api.pulls)

    def api_calls(self) -> int:
        return len(self.api.requests)

    def open_pull_listings(self) -> list[tuple[str, int]]:
        route = "GET /{organization}/{project}/_apis/git/repositories/{repositoryId}/pullrequests"
        return [
            (r.query["searchCriteria.targetRefName"][0].removeprefix("refs/heads/"), r.status)
            for r in self.api.calls(route)
            if "searchCriteria.targetRefName" in r.query
        ]


@pytest.fixture(params=FORGES)
def forge(request: pytest.FixtureRequest) -> Forge:
    """The forge of the test's parameter, on its stand-in and git server (only that one's
    fixtures start)."""
    if request.param == "github":
        return GitHubForge(
            request.getfixturevalue("github_api"),
            request.getfixturevalue("git_server"),
            request.getfixturevalue("key_file"),
        )
    if request.param == "bitbucket":
        return BitbucketForge(
            request.getfixturevalue("bitbucket_standin"), request.getfixturevalue("bitbucket_git")
        )
    if request.param == "azuredevops":
        return AzureDevOpsForge(
            request.getfixturevalue("azure_standin"), request.getfixturevalue("azure_git")
        )
    if request.param == "forgejo":
        return ForgejoForge(
            request.getfixturevalue("forgejo_standin"), request.getfixturevalue("forgejo_git")
        )
    return GitLabForge(request.getfixturevalue("gitlab_api"), request.getfixturevalue("gitlab_git"))
