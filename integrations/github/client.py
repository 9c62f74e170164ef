"""GitHub's REST API through githubkit: the calls Resolver makes back to GitHub.

Every failure leaves as a `TransientCallbackError` (retry later) or a `PermanentCallbackError`
(tell the user): `api.translate_errors` reads githubkit's errors and contract's `HttpErrors`
decides. githubkit's own retries and HTTP cache are off: the callback tasks retry, with one
attempt row per try.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Final, Literal
from urllib.parse import parse_qs, urlsplit

import httpx
from githubkit import GitHub
from githubkit.exception import GraphQLFailed
from githubkit.response import Response
from githubkit.typing import Missing
from githubkit.utils import UNSET

from integrations.github.api import (
    ERRORS,
    MESSAGE_LIMIT,
    from_response,
    github_session,
    translate_errors,
)
from integrations.github.settings import GitHubSettings
from integrations.toolkit.answers import fields, items, text
from integrations.toolkit.http import bounded_client
from resolver.contract.errors import CallbackError, PermanentCallbackError
from resolver.contract.outbound import PullInfo
from resolver.core.logs import redact
from resolver.core.settings import Settings

TokenProvider = Callable[[], str]
# What a 401 to the token means, as the error to raise instead (None: nothing more to say).
Refused = Callable[[], CallbackError | None]
Reaction = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]

WRITE_ROLES: Final = frozenset({"admin", "maintain", "write"})
# The legacy `permission` field folds maintain into write (and custom roles into their base).
WRITE_PERMISSIONS: Final = frozenset({"admin", "write"})
PAGE_SIZE: Final = 100  # GitHub's largest page


def split_repo(full_name: str) -> tuple[str, str]:
    """`"owner/name"` as its two parts."""
    owner, _, name = full_name.partition("/")
    if not owner or not name or "/" in name:
        raise PermanentCallbackError(f"{full_name!r} is not an owner/name repository")
    return owner, name


def _pull_info(answer: object) -> PullInfo:
    data = fields(answer)
    head, base, user = data.get("head") or {}, data.get("base") or {}, data.get("user") or {}
    number = int(data["number"])
    head_repo, base_repo = head.get("repo") or {}, base.get("repo") or {}
    # A fork's branch is not in the base repository (and a deleted fork has no repo at all);
    # GitHub serves every pull request's head there as refs/pull/N/head.
    forked = "repo" in head and head_repo.get("full_name") != base_repo.get("full_name")
    return PullInfo(
        number=number,
        url=text(data["html_url"]),
        head=str(head.get("ref") or ""),
        base=base.get("ref"),
        author=user.get("login"),
        fetch_ref=f"refs/pull/{number}/head" if forked else None,
    )


class GitHubClient:
    """The REST calls Resolver makes, as one installation or user.

    `token` is called before every request, so an installation token that expired in between is
    replaced; it may raise a callback error of its own (no credential, token mint failed).
    `refused` is asked what a 401 means (a person's stored token: they revoked it).
    """

    def __init__(
        self, settings: Settings, token: TokenProvider, refused: Refused | None = None
    ) -> None:
        self._settings = settings
        self._token = token
        self._refused = refused

    @property
    def bot_name(self) -> str:
        """The @handle the bot answers to (its comments are written by `<name>[bot]`)."""
        return self._settings.bot_name

    @contextmanager
    def _translated(self, action: str) -> Iterator[None]:
        try:
            with translate_errors(action):
                yield
        except PermanentCallbackError as error:
            instead = self._refused() if error.status == 401 and self._refused else None
            if instead is None:
                raise
            raise instead from None

    def __repr__(self) -> str:
        return f"GitHubClient({GitHubSettings.of(self._settings).api_url!r})"

    def _api(self) -> GitHub[Any]:
        # Keep the returned object in a variable while using `.rest`: githubkit's namespaces
        # hold only a weak reference to it.
        return github_session(self._settings, self._token())

    def can_write(self, repo: str, login: str) -> bool:
        """Whether `login` may push to `repo`: admin, maintain or write (custom roles by base)."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/collaborators/{username}/permission"):
            github = self._api()
            answer = github.rest.repos.get_collaborator_permission_level(owner, name, login)
            data = fields(answer.json())
            return (
                data.get("role_name") in WRITE_ROLES or data.get("permission") in WRITE_PERMISSIONS
            )

    def authenticated_login(self) -> str | None:
        """The login a user token acts as; None for an installation token, which GitHub refuses
        `GET /user` (403)."""
        try:
            with self._translated("GET /user"):
                github = self._api()
                data = fields(github.rest.users.get_authenticated().json())
        except PermanentCallbackError as error:
            if error.status == 403:
                return None
            raise
        return str(data.get("login") or "") or None

    def react(self, repo: str, comment_id: int, content: Reaction = "eyes") -> None:
        """Put a reaction on an issue or pull-request conversation comment."""
        owner, name = split_repo(repo)
        with self._translated("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"):
            github = self._api()
            github.rest.reactions.create_for_issue_comment(owner, name, comment_id, content=content)

    def post_comment(self, repo: str, issue_number: int, body: str) -> int:
        """Comment on an issue or pull request; returns the new comment's id."""
        owner, name = split_repo(repo)
        with self._translated("POST /repos/{owner}/{repo}/issues/{issue_number}/comments"):
            github = self._api()
            data = github.rest.issues.create_comment(owner, name, issue_number, body=body)
            return int(fields(data.json())["id"])

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        """Replace the body of an issue or pull-request comment (the status comment)."""
        owner, name = split_repo(repo)
        with self._translated("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"):
            github = self._api()
            github.rest.issues.update_comment(owner, name, comment_id, body=body)

    def find_open_pull(self, repo: str, head_branch: str) -> PullInfo | None:
        """The open pull request from `head_branch` of `repo`, if there is one."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/pulls"):
            github = self._api()
            pulls = github.rest.pulls.list(owner, name, state="open", head=f"{owner}:{head_branch}")
            found = items(pulls.json())
            return _pull_info(found[0]) if found else None

    def open_pulls(self, repo: str, base: str) -> tuple[PullInfo, ...]:
        """The open pull requests into `base`: the first page of PAGE_SIZE, newest first
        (bounded: the bot's branches are a few)."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/pulls"):
            github = self._api()
            pulls = github.rest.pulls.list(
                owner,
                name,
                state="open",
                base=base,
                sort="created",
                direction="desc",
                per_page=PAGE_SIZE,
            )
            return tuple(_pull_info(item) for item in items(pulls.json()))

    def get_pull(self, repo: str, number: int) -> PullInfo:
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/pulls/{pull_number}"):
            github = self._api()
            return _pull_info(github.rest.pulls.get(owner, name, number).json())

    def edit_pull_body(self, repo: str, number: int, body: str) -> None:
        """Replace a pull request's description."""
        owner, name = split_repo(repo)
        with translate_errors("PATCH /repos/{owner}/{repo}/pulls/{pull_number}"):
            github = self._api()
            github.rest.pulls.update(owner, name, number, body=body)

    def open_draft_pull(self, repo: str, head: str, base: str, title: str, body: str) -> PullInfo:
        """Open a draft pull request from `head` into `base`.

        If GitHub refuses because one is already open from `head` (a race with another worker),
        that one is returned. Where drafts are unavailable (private repositories on some plans)
        a regular pull request is opened instead.
        """
        try:
            return self._create_pull(repo, head, base, title, body, draft=True)
        except PermanentCallbackError as error:
            if error.status != 422:
                raise
            existing = self.find_open_pull(repo, head)
            if existing is not None:
                return existing
            if "draft" not in str(error).lower():
                raise
        return self._create_pull(repo, head, base, title, body, draft=False)

    def _create_pull(
        self, repo: str, head: str, base: str, title: str, body: str, *, draft: bool
    ) -> PullInfo:
        owner, name = split_repo(repo)
        with self._translated("POST /repos/{owner}/{repo}/pulls"):
            github = self._api()
            created = github.rest.pulls.create(
                owner, name, head=head, base=base, title=title, body=body, draft=draft
            )
            return _pull_info(created.json())

    def create_review(self, repo: str, number: int, review: dict[str, Any]) -> dict[str, Any]:
        """Submit one review of a pull request: its body, event, commit and line comments."""
        owner, name = split_repo(repo)
        with self._translated("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews"):
            github = self._api()
            created = github.rest.pulls.create_review(owner, name, number, data=review)  # type: ignore[call-overload]
            return fields(created.json())

    def reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The first page of a pull request's reviews (a retry looks for its own there)."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews"):
            github = self._api()
            found = github.rest.pulls.list_reviews(owner, name, number, per_page=PAGE_SIZE)
            return items(found.json())

    def reply_to_review_comment(
        self, repo: str, pull_number: int, comment_id: int, body: str
    ) -> int:
        """Answer in the thread of a comment on a pull request's diff; returns the reply's id."""
        owner, name = split_repo(repo)
        action = "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
        with self._translated(action):
            github = self._api()
            reply = github.rest.pulls.create_reply_for_review_comment(
                owner, name, pull_number, comment_id, body=body
            )
            return int(fields(reply.json())["id"])

    def edit_review_comment(self, repo: str, comment_id: int, body: str) -> None:
        """Replace the body of a comment on a pull request's diff (a status reply in a thread)."""
        owner, name = split_repo(repo)
        with self._translated("PATCH /repos/{owner}/{repo}/pulls/comments/{comment_id}"):
            github = self._api()
            github.rest.pulls.update_review_comment(owner, name, comment_id, body=body)

    def react_to_review_comment(
        self, repo: str, comment_id: int, content: Reaction = "eyes"
    ) -> None:
        owner, name = split_repo(repo)
        action = "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"
        with self._translated(action):
            github = self._api()
            github.rest.reactions.create_for_pull_request_review_comment(
                owner, name, comment_id, content=content
            )

    def issue_comments(
        self, repo: str, number: int, limit: int, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        """The `limit` newest conversation comments of an issue or pull request (of those
        updated at or after `since`, when given), oldest first."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/issues/{issue_number}/comments"):
            github = self._api()
            return _newest(
                lambda page: github.rest.issues.list_comments(
                    owner, name, number, per_page=PAGE_SIZE, page=page, since=_or_unset(since)
                ),
                limit,
            )

    def review_comments(
        self, repo: str, number: int, limit: int, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        """The `limit` newest comments on a pull request's diff (every review thread; of those
        updated at or after `since`, when given), oldest first."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/pulls/{pull_number}/comments"):
            github = self._api()
            return _newest(
                lambda page: github.rest.pulls.list_review_comments(
                    owner, name, number, per_page=PAGE_SIZE, page=page, since=_or_unset(since)
                ),
                limit,
            )

    def check_annotations(self, repo: str, check_run_id: int, limit: int) -> list[dict[str, Any]]:
        """The first `limit` annotations of a check run (file, line, level, message)."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations"):
            github = self._api()
            found = github.rest.checks.list_annotations(
                owner, name, check_run_id, per_page=min(limit, PAGE_SIZE)
            )
            return items(found.json())[:limit]

    def job_log_location(self, repo: str, job_id: int) -> str:
        """The short-lived download URL of an Actions job's log; it needs no token, and the
        token is never sent there."""
        return _log_location(self._settings, self._token(), repo, job_id)

    def repository(self, repo: str) -> tuple[str, str]:
        """The repository's clone URL (as GitHub states it) and its default branch."""
        owner, name = split_repo(repo)
        with self._translated("GET /repos/{owner}/{repo}"):
            github = self._api()
            data = fields(github.rest.repos.get(owner, name).json())
            return text(data["clone_url"]), text(data["default_branch"])

    def graphql(self, action: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """The `data` of a GraphQL call (`action` names it in errors). GitHub answers 200 with
        `errors` when it fails; those become a PermanentCallbackError that names them.
        https://docs.github.com/graphql/guides/forming-calls-with-graphql"""
        with self._translated(f"GraphQL {action}"):
            github = self._api()
            try:
                return github.graphql(query, variables)
            except GraphQLFailed as failed:
                raise PermanentCallbackError(_graphql_detail(action, failed)) from None


def _graphql_detail(action: str, failed: GraphQLFailed) -> str:
    errors = failed.response.errors or []
    parts = [f"{e.type}: {e.message}" if e.type else e.message for e in errors]
    detail = redact("; ".join(parts) or "no message")[:MESSAGE_LIMIT]
    return f"GitHub's GraphQL API refused {action}: {detail}"


def _log_location(settings: Settings, token: str, repo: str, job_id: int) -> str:
    """Where GitHub keeps an Actions job's log: the `Location` its logs endpoint redirects to.
    https://docs.github.com/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run"""
    action = "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"
    api = GitHubSettings.of(settings).api_url.rstrip("/")
    url = f"{api}/repos/{repo}/actions/jobs/{job_id}/logs"
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "User-Agent": f"Resolver ({settings.bot_name})",
    }
    try:
        with bounded_client() as http:
            response = http.get(url, headers=headers, follow_redirects=False)
    except httpx.TransportError as error:
        raise ERRORS.unreachable(action, error) from None
    except httpx.DecodingError as error:
        raise ERRORS.unusable_answer(action, error) from None
    location = response.headers.get("location")
    if not response.is_redirect or not location:
        raise from_response(action, response)
    return str(location)


def _newest(fetch: Callable[[int], Response[Any, Any]], limit: int) -> list[dict[str, Any]]:
    """The `limit` newest items of a list GitHub returns oldest first, a page at a time: its
    last page, and the one before when that is too short (`limit` is at most a page)."""
    first = fetch(1)
    last = _page_number(first.raw_response.links.get("last", {}).get("url"))
    if last is None or last == 1:
        return items(first.json())[-limit:]
    newest = items(fetch(last).json())
    if len(newest) < limit:
        before = first if last == 2 else fetch(last - 1)
        newest = items(before.json()) + newest
    return newest[-limit:]


def _page_number(url: str | None) -> int | None:
    pages = parse_qs(urlsplit(url).query).get("page") if url else None
    return int(pages[-1]) if pages and pages[-1].isdigit() else None


def _or_unset(value: datetime | None) -> Missing[datetime]:
    """GitHub's `since`, in the whole seconds of its timestamps."""
    return UNSET if value is None else value.replace(microsecond=0)
