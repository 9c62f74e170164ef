"""Forgejo's (and Gitea's) REST API, `/api/v1`, through httpx: the calls Resolver makes back.

Every failure leaves as a `TransientCallbackError` (retry later) or a `PermanentCallbackError`
(tell the user), as contract's `HttpErrors` decides; nothing here retries or sleeps, as the callback
tasks retry with one attempt row per try. The token is asked for before every call and sent
only to the instance.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, Final, Literal, TypeVar
from urllib.parse import quote

import httpx

from integrations.toolkit.answers import fields, items, text
from integrations.toolkit.http import JsonCalls
from resolver.contract.errors import HttpErrors, PermanentCallbackError
from resolver.contract.outbound import PullInfo, RepoInfo

TokenProvider = Callable[[], str]
Reaction = Literal["+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"]
HookType = Literal["forgejo", "gitea"]
T = TypeVar("T")

API_PREFIX: Final = "/api/v1"
PAGE_SIZE: Final = 50  # Forgejo's default `[api] MAX_RESPONSE_ITEMS`; a larger limit is cut
MAX_PAGES: Final = 10  # the bot's open pull requests are a few; never list without end
# `AccessMode.String()` of the modes that may push.
WRITE_MODES: Final = frozenset({"write", "admin", "owner"})
# Forgejo's default `WORK_IN_PROGRESS_PREFIXES`: the API has no draft flag, the title makes one.
DRAFT_PREFIX: Final = "WIP: "
# The hook events Resolver routes (`routes.ROUTES`), as the hook API names them.
HOOK_EVENTS: Final = (
    "issue_comment",
    "issue_assign",
    "issue_label",
    "pull_request_comment",
    "pull_request_review",
    "pull_request",  # opened, reopened: auto-reviews (review_routes.py)
    "pull_request_sync",  # new commits: auto-reviews
    "push",
)


# Forgejo's owner and repository names (`[-.\w]+`); anything else never reaches a URL path.
_NAME: Final = re.compile(r"[\w.-]+")


def split_repo(full_name: str) -> tuple[str, str]:
    owner, _, name = full_name.partition("/")
    if not (_NAME.fullmatch(owner) and _NAME.fullmatch(name)):
        raise PermanentCallbackError(f"{full_name[:100]!r} is not an owner/name repository")
    return owner, name


# An error answer's words are its `message` (Forgejo's `APIError`).
CALLS: Final = JsonCalls(HttpErrors("Forgejo"))


def _pull_info(answer: object) -> PullInfo:
    data = fields(answer)
    head, base, user = data.get("head") or {}, data.get("base") or {}, data.get("user") or {}
    number = int(data["number"])
    # A fork's branch is not in the base repository; Forgejo keeps every pull request's head
    # there as refs/pull/N/head.
    head_repo, base_repo = head.get("repo") or {}, base.get("repo") or {}
    forked = "repo" in head and head_repo.get("full_name") != base_repo.get("full_name")
    return PullInfo(
        number=number,
        url=text(data["html_url"]),
        head=str(head.get("ref") or ""),
        base=base.get("ref"),
        author=user.get("login"),
        fetch_ref=f"refs/pull/{number}/head" if forked else None,
    )


def draft_title(title: str) -> str:
    """`title` as Forgejo's work-in-progress title, once."""
    return title if title.upper().startswith(("WIP:", "[WIP]")) else DRAFT_PREFIX + title


class ForgejoClient:
    """The REST calls Resolver makes on one instance (`url`, without `/api/v1`), as the user
    the token acts for (the bot's token, or a person's OAuth token)."""

    def __init__(
        self,
        url: str,
        token: TokenProvider,
        *,
        user_agent: str = "Resolver",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._api = url.rstrip("/") + API_PREFIX
        self._token = token
        self._user_agent = user_agent
        self._transport = transport

    def __repr__(self) -> str:
        return f"ForgejoClient({self._api!r})"

    def _call(
        self,
        method: str,
        action: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, str | int] | None = None,
    ) -> httpx.Response:
        """One request; `action` (`"POST /repos/{owner}/{repo}/pulls"`) names it in errors."""
        headers = {
            "Authorization": f"token {self._token()}",
            "Accept": "application/json",
            "User-Agent": self._user_agent,
        }
        return CALLS.send(
            method,
            action,
            self._api + path,
            headers=headers,
            json=json,
            params=params,
            transport=self._transport,
        )

    def _json(
        self, method: str, action: str, path: str, shape: Callable[[Any], T], **options: Any
    ) -> T:
        """One request and its answer as `shape` reads it (a wrong shape is an unusable one)."""
        return CALLS.read(action, self._call(method, action, path, **options), shape)

    def authenticated_login(self) -> str:
        """The login the token acts as."""
        return self._json("GET", "GET /user", "/user", lambda data: text(fields(data)["login"]))

    def permission(self, repo: str, login: str) -> str:
        """`login`'s mode on `repo` (none, read, write, admin, owner). Forgejo answers only a
        site admin, a repository admin or the person themselves: the bot needs admin."""
        owner, name = split_repo(repo)
        action = "GET /repos/{owner}/{repo}/collaborators/{collaborator}/permission"
        path = f"/repos/{owner}/{name}/collaborators/{quote(login, safe='')}/permission"
        return self._json("GET", action, path, _permission)

    def can_write(self, repo: str, login: str) -> bool:
        """Whether `login` may push to `repo` (write, admin or owner)."""
        return self.permission(repo, login) in WRITE_MODES

    def repository(self, repo: str) -> RepoInfo:
        """The repository as the instance describes it: its clone URL and default branch."""
        owner, name = split_repo(repo)
        return self._json("GET", "GET /repos/{owner}/{repo}", f"/repos/{owner}/{name}", _repo_info)

    def post_comment(self, repo: str, number: int, body: str) -> int:
        """Comment on an issue or a pull request; the new comment's id."""
        owner, name = split_repo(repo)
        action = "POST /repos/{owner}/{repo}/issues/{index}/comments"
        path = f"/repos/{owner}/{name}/issues/{number}/comments"
        return self._json("POST", action, path, _id, json={"body": body})

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        """Replace a comment's body (the status comment)."""
        owner, name = split_repo(repo)
        action = "PATCH /repos/{owner}/{repo}/issues/comments/{id}"
        path = f"/repos/{owner}/{name}/issues/comments/{comment_id}"
        self._call("PATCH", action, path, json={"body": body})

    def react(self, repo: str, comment_id: int, content: Reaction = "eyes") -> None:
        """React to a comment; reacting twice the same way is no error (Forgejo answers 200)."""
        owner, name = split_repo(repo)
        action = "POST /repos/{owner}/{repo}/issues/comments/{id}/reactions"
        path = f"/repos/{owner}/{name}/issues/comments/{comment_id}/reactions"
        self._call("POST", action, path, json={"content": content})

    def react_to_issue(self, repo: str, number: int, content: Reaction = "eyes") -> None:
        """React to an issue's or a pull request's own text."""
        owner, name = split_repo(repo)
        action = "POST /repos/{owner}/{repo}/issues/{index}/reactions"
        path = f"/repos/{owner}/{name}/issues/{number}/reactions"
        self._call("POST", action, path, json={"content": content})

    def issue_comments(
        self, repo: str, number: int, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        """The comments of an issue or a pull request, oldest first (those updated at or after
        `since`, when given). Forgejo answers them all at once."""
        owner, name = split_repo(repo)
        action = "GET /repos/{owner}/{repo}/issues/{index}/comments"
        path = f"/repos/{owner}/{name}/issues/{number}/comments"
        params = {"since": since.isoformat()} if since is not None else None
        return self._json("GET", action, path, items, params=params)

    def review_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """Every comment on a line of a pull request's diff, review by review, oldest first.
        Forgejo lists them per review only (a reply in a thread is a comment of its own
        review), and the reviews a page at a time."""
        owner, name = split_repo(repo)
        base = f"/repos/{owner}/{name}/pulls/{number}/reviews"
        comments: list[dict[str, Any]] = []
        for page in range(1, MAX_PAGES + 1):
            params = {"limit": PAGE_SIZE, "page": page}
            action = "GET /repos/{owner}/{repo}/pulls/{index}/reviews"
            reviews = self._json("GET", action, base, _reviews, params=params)
            for review_id, commented in reviews:
                if commented:
                    comments += self._review_comments(base, review_id)
            if len(reviews) < PAGE_SIZE:
                break
        return comments

    def reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The first page of a pull request's reviews (a retry looks for its own there)."""
        owner, name = split_repo(repo)
        path = f"/repos/{owner}/{name}/pulls/{number}/reviews"
        action = "GET /repos/{owner}/{repo}/pulls/{index}/reviews"
        return self._json("GET", action, path, items, params={"limit": PAGE_SIZE})

    def create_review(self, repo: str, number: int, review: dict[str, Any]) -> dict[str, Any]:
        """Submit one review of a pull request with its line comments."""
        owner, name = split_repo(repo)
        path = f"/repos/{owner}/{name}/pulls/{number}/reviews"
        action = "POST /repos/{owner}/{repo}/pulls/{index}/reviews"
        return self._json("POST", action, path, fields, json=review)

    def _review_comments(self, base: str, review_id: int) -> list[dict[str, Any]]:
        action = "GET /repos/{owner}/{repo}/pulls/{index}/reviews/{id}/comments"
        return self._json("GET", action, f"{base}/{review_id}/comments", items)

    def _open_pulls(self, repo: str) -> Iterator[PullInfo]:
        """The open pull requests, newest first, a page at a time (at most MAX_PAGES)."""
        owner, name = split_repo(repo)
        action = "GET /repos/{owner}/{repo}/pulls"
        for page in range(1, MAX_PAGES + 1):
            params = {"state": "open", "limit": PAGE_SIZE, "page": page}
            found = self._json("GET", action, f"/repos/{owner}/{name}/pulls", _pulls, params=params)
            yield from found
            if len(found) < PAGE_SIZE:
                return

    def find_open_pull(self, repo: str, head: str) -> PullInfo | None:
        """The open pull request from branch `head` of `repo` itself, if there is one (the list
        has no filter by head)."""
        return next((pull for pull in self._open_pulls(repo) if pull.head == head), None)

    def open_pulls(self, repo: str, base: str) -> tuple[PullInfo, ...]:
        """The open pull requests into `base`, newest first."""
        return tuple(pull for pull in self._open_pulls(repo) if pull.base == base)

    def get_pull(self, repo: str, number: int) -> PullInfo:
        owner, name = split_repo(repo)
        action = "GET /repos/{owner}/{repo}/pulls/{index}"
        return self._json("GET", action, f"/repos/{owner}/{name}/pulls/{number}", _pull_info)

    def edit_pull_body(self, repo: str, number: int, body: str) -> None:
        owner, name = split_repo(repo)
        action = "PATCH /repos/{owner}/{repo}/pulls/{index}"
        self._call("PATCH", action, f"/repos/{owner}/{name}/pulls/{number}", json={"body": body})

    def open_draft_pull(self, repo: str, head: str, base: str, title: str, body: str) -> PullInfo:
        """Open a work-in-progress pull request from `head` into `base` (a `WIP:` title). If
        Forgejo refuses because one is open already (409: a race with another worker), that
        one is returned."""
        owner, name = split_repo(repo)
        form = {"head": head, "base": base, "title": draft_title(title), "body": body}
        try:
            return self._json(
                "POST",
                "POST /repos/{owner}/{repo}/pulls",
                f"/repos/{owner}/{name}/pulls",
                _pull_info,
                json=form,
            )
        except PermanentCallbackError as error:
            existing = self.find_open_pull(repo, head) if error.status == 409 else None
            if existing is None:
                raise
            return existing

    def create_repo_hook(self, repo: str, url: str, secret: str, kind: HookType = "forgejo") -> int:
        """A webhook of the repository to `url`, signed with `secret`, on HOOK_EVENTS; its id.
        The repository's admins may create one."""
        owner, name = split_repo(repo)
        action = "POST /repos/{owner}/{repo}/hooks"
        form = _hook_form(url, secret, kind)
        return self._json("POST", action, f"/repos/{owner}/{name}/hooks", _id, json=form)

    def create_org_hook(self, org: str, url: str, secret: str, kind: HookType = "forgejo") -> int:
        """A webhook of every repository of the organisation; its owners may create one."""
        if not _NAME.fullmatch(org):
            raise PermanentCallbackError(f"{org[:100]!r} is not an organisation name")
        form = _hook_form(url, secret, kind)
        return self._json("POST", "POST /orgs/{org}/hooks", f"/orgs/{org}/hooks", _id, json=form)

    def edit_hook(
        self, owner: str, hook_id: int, url: str, secret: str, *, org: bool = False
    ) -> None:
        """Point hook `hook_id` of a repository (`owner/name`) or an organisation at `url`,
        signed with a new `secret`, on HOOK_EVENTS, active."""
        form = _hook_form(url, secret, "forgejo")
        del form["type"]  # a hook's type cannot change
        if org:
            if not _NAME.fullmatch(owner):
                raise PermanentCallbackError(f"{owner[:100]!r} is not an organisation name")
            action, path = "PATCH /orgs/{org}/hooks/{id}", f"/orgs/{owner}/hooks/{hook_id}"
        else:
            repo_owner, name = split_repo(owner)
            action = "PATCH /repos/{owner}/{repo}/hooks/{id}"
            path = f"/repos/{repo_owner}/{name}/hooks/{hook_id}"
        self._call("PATCH", action, path, json=form)

    def hooks(self, owner: str, *, org: bool = False) -> list[tuple[int, object]]:
        """The webhooks of a repository (`owner/name`) or, with `org`, of an organisation (a
        page's worth: a repository has a few): each one's id and the URL it delivers to."""
        if org:
            if not _NAME.fullmatch(owner):
                raise PermanentCallbackError(f"{owner[:100]!r} is not an organisation name")
            action, path = "GET /orgs/{org}/hooks", f"/orgs/{owner}/hooks"
        else:
            repo_owner, name = split_repo(owner)
            action, path = "GET /repos/{owner}/{repo}/hooks", f"/repos/{repo_owner}/{name}/hooks"
        return self._json("GET", action, path, _hooks, params={"limit": PAGE_SIZE})


def _id(answer: object) -> int:
    return int(fields(answer)["id"])


def _permission(answer: object) -> str:
    return str(fields(answer).get("permission") or "none")


def _repo_info(answer: object) -> RepoInfo:
    data = fields(answer)
    return RepoInfo(
        full_name=text(data["full_name"]),
        clone_url=text(data["clone_url"]),
        default_branch=text(data["default_branch"]),
        web_url=data.get("html_url"),
    )


def _pulls(answer: object) -> list[PullInfo]:
    return [_pull_info(item) for item in items(answer)]


def _reviews(answer: object) -> list[tuple[int, bool]]:
    """Each review's id, and whether it has line comments."""
    return [(int(review["id"]), bool(review.get("comments_count"))) for review in items(answer)]


def _hooks(answer: object) -> list[tuple[int, object]]:
    """Each hook's id, and the URL its config names."""
    return [
        (int(hook["id"]), fields(hook.get("config") or {}).get("url")) for hook in items(answer)
    ]


def _hook_form(url: str, secret: str, kind: HookType) -> dict[str, Any]:
    """Gitea knows no `forgejo` type; both send the same body. A hook is created inactive
    unless `active` says otherwise."""
    return {
        "type": kind,
        "config": {"url": url, "content_type": "json", "secret": secret},
        "events": list(HOOK_EVENTS),
        "active": True,
    }
