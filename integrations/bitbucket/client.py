"""Bitbucket Cloud's REST API 2.0, through httpx: the calls Resolver makes back.

Every failure leaves as a `TransientCallbackError` (retry later) or a `PermanentCallbackError`
(tell the user), as contract's `HttpErrors` decides; nothing here retries or sleeps, as the
callback tasks retry with one attempt row per try. The token is asked for before every call
and sent only to the API's own address: a listing's `next` link elsewhere is not followed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from integrations.bitbucket.shapes import (
    fork_of,
    hook_uuid,
    identifier,
    kept,
    login,
    page,
    pull_info,
    repo_info,
    text,
)
from integrations.toolkit import answers
from integrations.toolkit.http import bounded_client
from integrations.toolkit.limits import API_CALL, Limits
from resolver.contract.errors import HttpErrors, PermanentCallbackError, parse_retry_after
from resolver.contract.outbound import PullInfo, RepoInfo
from resolver.core.logs import redact

TokenProvider = Callable[[], str]
T = TypeVar("T")

MAX_PAGES: Final = 10  # the bot's open pull requests are a few; never list without end
MESSAGE_LIMIT: Final = 300
ERROR_READ_LIMIT: Final = 8 * 1024  # of an error answer: its message is cut to 300 anyway
WRITE_PERMISSIONS: Final = frozenset({"write", "admin"})
# The hook events Resolver routes (`routes.ROUTES`, Cloud's part).
HOOK_EVENTS: Final = (
    "pullrequest:comment_created",
    "pullrequest:created",
    "pullrequest:updated",  # new commits, or an edit: auto-reviews (review_routes.py)
    "pullrequest:changes_request_created",
    "repo:push",
    "repo:commit_status_updated",
)
ERRORS: Final = HttpErrors("Bitbucket")
# Workspace ids and repository slugs (letters, digits, `-`, `_`, `.`); nothing else reaches a
# URL path.
_NAME: Final = re.compile(r"[\w.-]+")


def split_repo(full_name: str) -> tuple[str, str]:
    workspace, _, slug = full_name.partition("/")
    if not (_NAME.fullmatch(workspace) and _NAME.fullmatch(slug)):
        raise PermanentCallbackError(f"{full_name[:100]!r} is not a workspace/slug repository")
    return workspace, slug


def check_workspace(workspace: str) -> str:
    if not _NAME.fullmatch(workspace):
        raise PermanentCallbackError(f"{workspace[:100]!r} is not a workspace id")
    return workspace


def _detail(response: httpx.Response, body: bytes) -> str:
    """Bitbucket's `error.message` (its `error` schema) in an error answer's `body`, redacted
    and shortened."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return redact(str(message or response.reason_phrase or "no message"))[:MESSAGE_LIMIT]


def check_answer(action: str, response: httpx.Response) -> None:
    """A 4xx or 5xx answer as contract's callback error (see `HttpErrors`)."""
    if response.status_code >= 300:  # a redirect is no answer to an API call
        detail = _detail(response, _error_document(response))
        wait = parse_retry_after(response.headers.get("retry-after"))
        raise ERRORS.answered(action, response.status_code, detail, retry_after=wait)


def _error_document(response: httpx.Response) -> bytes:
    """The start of an error answer, at most ERROR_READ_LIMIT bytes: a streamed one (a step's
    log) may be of any size, and a 256 MB error page was read whole."""
    if response.is_stream_consumed:
        return response.content[:ERROR_READ_LIMIT]
    start = b""
    for chunk in response.iter_bytes(ERROR_READ_LIMIT):
        start += chunk
        if len(start) >= ERROR_READ_LIMIT:
            break
    return start[:ERROR_READ_LIMIT]


class BitbucketClient:
    """The REST calls Resolver makes, as the account the token acts for (the bot's access
    token, or a person's OAuth token)."""

    def __init__(
        self,
        api_url: str,
        token: TokenProvider,
        *,
        user_agent: str = "Resolver",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._api = api_url.rstrip("/")
        self._token = token
        self._user_agent = user_agent
        self._transport = transport

    def __repr__(self) -> str:
        return f"BitbucketClient({self._api!r})"

    def _call(
        self,
        method: str,
        action: str,
        url: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, str | int] | None = None,
    ) -> httpx.Response:
        """One request to `url` (a path below the API, or one of its own absolute links);
        `action` (`"POST /repositories/{workspace}/{repo_slug}/pullrequests"`) names it."""
        target = url if url.startswith(self._api + "/") else self._api + url
        headers = self._headers() | {"Accept": "application/json"}
        with self._errors(action), self._http() as http:
            response = http.request(method, target, headers=headers, json=json, params=params)
        check_answer(action, response)
        return response

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token()}", "User-Agent": self._user_agent}

    def _http(self, limits: Limits = API_CALL) -> httpx.Client:
        return bounded_client(limits, self._transport)

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """httpx's failures as contract's callback errors."""
        try:
            yield
        except httpx.TimeoutException:
            raise ERRORS.timed_out(action) from None
        except httpx.TransportError as error:
            raise ERRORS.unreachable(action, error) from None
        except httpx.InvalidURL as error:
            raise ERRORS.unusable_url(action, error) from None
        except httpx.DecodingError as error:
            raise ERRORS.unusable_answer(action, error) from None

    def _json(
        self, method: str, action: str, url: str, shape: Callable[[Any], T], **options: Any
    ) -> T:
        """One request and its answer as `shape` reads it (a wrong shape is an unusable one)."""
        response = self._call(method, action, url, **options)
        return answers.read(ERRORS, action, response.json, shape)

    def _pages(
        self, action: str, path: str, params: Mapping[str, str | int] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every value of a paginated listing, page after page by its `next` link (at most
        MAX_PAGES; a link off the API's own address ends it)."""
        url: str | None = path
        for _ in range(MAX_PAGES):
            if url is None:
                return
            values, following = self._json(
                "GET", action, url, page, params=params if url == path else None
            )
            yield from values
            url = following if isinstance(following, str) and self._own(following) else None

    def _own(self, url: str) -> bool:
        api, given = urlsplit(self._api), urlsplit(url)
        return (given.scheme, given.netloc) == (api.scheme, api.netloc) and given.path.startswith(
            api.path + "/"
        )

    def authenticated_user(self) -> dict[str, Any]:
        """The account the token acts for (`GET /user`)."""
        return self._json("GET", "GET /user", "/user", answers.fields)

    def authenticated_login(self) -> str:
        return self._json("GET", "GET /user", "/user", login)

    def permission(self, repo: str, user_uuid: str) -> str:
        """The person's effective permission on `repo` (admin, write, read, or none). Only a
        repository admin may ask: the bot's token needs `repository:admin`."""
        workspace, slug = split_repo(repo)
        action = "GET /workspaces/{workspace}/permissions/repositories/{repo_slug}"
        path = f"/workspaces/{workspace}/permissions/repositories/{slug}"
        query = {"q": f'user.uuid="{user_uuid}"'}
        found = next(iter(self._pages(action, path, query)), None)
        return str((found or {}).get("permission") or "none")

    def can_write(self, repo: str, user_uuid: str) -> bool:
        return self.permission(repo, user_uuid) in WRITE_PERMISSIONS

    def repository(self, repo: str) -> RepoInfo:
        """The repository: its HTTPS clone link and main branch."""
        workspace, slug = split_repo(repo)
        path = f"/repositories/{workspace}/{slug}"
        action = "GET /repositories/{workspace}/{repo_slug}"
        return self._json("GET", action, path, lambda answer: repo_info(answer, repo))

    def _comments_path(self, repo: str, number: int) -> str:
        workspace, slug = split_repo(repo)
        return f"/repositories/{workspace}/{slug}/pullrequests/{int(number)}/comments"

    def post_comment(self, repo: str, number: int, body: str, parent: int | None = None) -> int:
        """Comment on a pull request (in a thread: an answer to `parent`); the comment's id."""
        action = (
            "POST /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/comments"
        )
        form = text(body) | ({"parent": {"id": parent}} if parent is not None else {})
        return self._json("POST", action, self._comments_path(repo, number), identifier, json=form)

    def post_line_comment(
        self, repo: str, number: int, body: str, inline: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Comment on one line of a pull request's diff (`inline`: `path` and `to`, a line of
        the head, or `from`, a line of the base); the comment as Bitbucket answers it."""
        action = (
            "POST /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/comments"
        )
        form = text(body) | {"inline": dict(inline)}
        path = self._comments_path(repo, number)
        return self._json("POST", action, path, answers.fields, json=form)

    def request_changes(self, repo: str, number: int) -> None:
        """Mark the pull request "changes requested" by the token's account."""
        workspace, slug = split_repo(repo)
        action = (
            "POST /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}"
            "/request-changes"
        )
        path = f"/repositories/{workspace}/{slug}/pullrequests/{int(number)}/request-changes"
        self._call("POST", action, path)

    def edit_comment(self, repo: str, number: int, comment_id: int, body: str) -> None:
        """Replace a comment's text (the status comment)."""
        action = (
            "PUT /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}"
            "/comments/{comment_id}"
        )
        path = f"{self._comments_path(repo, number)}/{int(comment_id)}"
        self._call("PUT", action, path, json=text(body))

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """A pull request's comments, oldest first (at most MAX_PAGES pages of them)."""
        action = "GET /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/comments"
        return list(self._pages(action, self._comments_path(repo, number)))

    def _open_pulls(self, repo: str) -> Iterator[PullInfo]:
        """The open pull requests from branches of `repo` itself (one from a fork has a branch
        the bot may not push to)."""
        workspace, slug = split_repo(repo)
        action = "GET /repositories/{workspace}/{repo_slug}/pullrequests"
        path = f"/repositories/{workspace}/{slug}/pullrequests"
        with answers.reading(ERRORS, action):
            for item in self._pages(action, path, {"state": "OPEN"}):
                if fork_of(item) is None:
                    yield pull_info(item)

    def find_open_pull(self, repo: str, head: str) -> PullInfo | None:
        """The open pull request from branch `head` of `repo` itself, if there is one."""
        return next((pull for pull in self._open_pulls(repo) if pull.head == head), None)

    def open_pulls(self, repo: str, base: str) -> tuple[PullInfo, ...]:
        return tuple(pull for pull in self._open_pulls(repo) if pull.base == base)

    def get_pull(self, repo: str, number: int) -> PullInfo:
        """The pull request; from a fork, with the fork's clone link (the bot must be able to
        read the fork: a public one, or one shared with it)."""
        workspace, slug = split_repo(repo)
        action = "GET /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}"
        path = f"/repositories/{workspace}/{slug}/pullrequests/{int(number)}"
        data = self._json("GET", action, path, answers.fields)
        with answers.reading(ERRORS, action):
            fork = fork_of(data)
            return pull_info(data, None if fork is None else self._fork_clone(fork))

    def _fork_clone(self, fork: str) -> str:
        try:
            return self.repository(fork).clone_url
        except PermanentCallbackError as error:
            raise PermanentCallbackError(
                f"this pull request comes from the fork {fork[:100]}, which I cannot read "
                f"({error})",
                status=error.status,
            ) from None

    def edit_pull_body(self, repo: str, number: int, body: str) -> None:
        """Replace the description. Bitbucket's PUT replaces the pull request: a field left out
        is dropped (a draft would stop being one, its reviewers would go), so the title, the
        draft flag and the reviewers are read first and sent back as they are."""
        workspace, slug = split_repo(repo)
        path = f"/repositories/{workspace}/{slug}/pullrequests/{int(number)}"
        action = "{workspace}/{repo_slug}/pullrequests/{pull_request_id}"
        form = self._json("GET", f"GET /repositories/{action}", path, kept) | {"description": body}
        self._call("PUT", f"PUT /repositories/{action}", path, json=form)

    def open_draft_pull(self, repo: str, head: str, base: str, title: str, body: str) -> PullInfo:
        """Open a draft pull request (`draft: true`) from `head` into `base`. If Bitbucket
        refuses because one is open already (a race with another worker), that one."""
        workspace, slug = split_repo(repo)
        form = {
            "title": title,
            "description": body,
            "source": {"branch": {"name": head}},
            "destination": {"branch": {"name": base}},
            "draft": True,
        }
        action = "POST /repositories/{workspace}/{repo_slug}/pullrequests"
        path = f"/repositories/{workspace}/{slug}/pullrequests"
        try:
            return self._json("POST", action, path, pull_info, json=form)
        except PermanentCallbackError as error:
            existing = self.find_open_pull(repo, head) if error.status in (400, 409) else None
            if existing is None:
                raise
            return existing

    def _hooks_path(self, owner: str, workspace: bool) -> tuple[str, str]:
        if workspace:
            return "/workspaces/{workspace}/hooks", f"/workspaces/{check_workspace(owner)}/hooks"
        name, slug = split_repo(owner)
        return "/repositories/{workspace}/{repo_slug}/hooks", f"/repositories/{name}/{slug}/hooks"

    def hooks(self, owner: str, *, workspace: bool = False) -> list[tuple[str, object]]:
        """The webhooks of a repository (`workspace/slug`) or, with `workspace`, of a workspace:
        each one's uuid and the URL it delivers to."""
        template, path = self._hooks_path(owner, workspace)
        action = f"GET {template}"
        listed = list(self._pages(action, path))
        with answers.reading(ERRORS, action):
            return [(answers.text(hook["uuid"]), hook.get("url")) for hook in listed]

    def create_hook(self, owner: str, url: str, secret: str, *, workspace: bool = False) -> str:
        """A webhook to `url`, signed with `secret`, on HOOK_EVENTS; its uuid."""
        template, path = self._hooks_path(owner, workspace)
        form = hook_form(url, secret)
        return self._json("POST", f"POST {template}", path, hook_uuid, json=form)

    def edit_hook(
        self, owner: str, uid: str, url: str, secret: str, *, workspace: bool = False
    ) -> None:
        """Point hook `uid` at `url`, signed with a new `secret`, on HOOK_EVENTS, active."""
        template, path = self._hooks_path(owner, workspace)
        action = f"PUT {template}/{{uid}}"
        self._call("PUT", action, f"{path}/{quote(uid, safe='{}-')}", json=hook_form(url, secret))


def hook_form(url: str, secret: str) -> dict[str, Any]:
    return {
        "description": "Resolver",
        "url": url,
        "active": True,
        "secret": secret,
        "events": list(HOOK_EVENTS),
    }
