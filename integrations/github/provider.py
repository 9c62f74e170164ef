"""GitHub as a conversation (issues, pull requests, review threads) and as a forge."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from pydantic import JsonValue

from integrations.github import api
from integrations.github.auth import client_for_job, git_auth_env, token_for_job
from integrations.github.client import GitHubClient
from integrations.github.threads import resolve_review_thread, resolved_roots
from integrations.github.trigger import ISSUE_COMMENT, REVIEW_COMMENT, part_of
from resolver.contract.errors import CallbackError, PermanentCallbackError
from resolver.contract.outbound import (
    Comment,
    ForgeUser,
    History,
    PullInfo,
    RepoInfo,
    ReviewThread,
    has_hidden_tag,
    tag_of,
    with_hidden_tag,
)
from resolver.contract.triggers import TaskTrigger, comment_of, is_pull, number_of, repo_of
from resolver.core.logs import log
from resolver.core.settings import Settings

logger = logging.getLogger(__name__)

HISTORY_LIMIT: Final = 50


def _int(value: object) -> int | None:
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


class GitHubConversation:
    """The issue or pull request of a trigger; in a review thread when it came from one."""

    def __init__(self, client: GitHubClient, trigger: TaskTrigger) -> None:
        self._client = client
        self._trigger = trigger
        self._part = part_of(trigger)
        self._repo = repo_of(trigger) or ""
        number = number_of(trigger)
        if not self._repo or number is None:
            raise PermanentCallbackError("the trigger names no GitHub issue or pull request")
        self._number = number

    def _thread_root(self) -> int | None:
        if self._part.comment_kind != REVIEW_COMMENT:
            return None
        return self._part.in_reply_to_id or comment_of(self._trigger)

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        """The tag is a hidden HTML comment in the text; the reference keeps it for edits."""
        root, body = self._thread_root(), with_hidden_tag(text, tag)
        if root is not None:
            reply = self._client.reply_to_review_comment(self._repo, self._number, root, body)
            return _ref(REVIEW_COMMENT, reply, tag)
        return _ref(ISSUE_COMMENT, self._client.post_comment(self._repo, self._number, body), tag)

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        """Our newest comment with `tag`, where `post` puts it: the bot's, or, when the job acts
        with a user's token, that user's (asked of GitHub only when such a comment exists)."""
        root = self._thread_root()
        if root is None:
            kind = ISSUE_COMMENT
            items = self._client.issue_comments(self._repo, self._number, HISTORY_LIMIT, since)
        else:
            kind = REVIEW_COMMENT
            items = self._client.review_comments(self._repo, self._number, HISTORY_LIMIT, since)
            items = [item for item in items if _int(item.get("in_reply_to_id")) == root]
        tagged = [
            item
            for item in reversed(items)
            if _int(item.get("id")) is not None and has_hidden_tag(str(item.get("body") or ""), tag)
        ]
        found = next((item for item in tagged if _by_bot(item, self._client.bot_name)), None)
        if found is None and tagged:
            poster = (self._client.authenticated_login() or "").lower()
            found = next(
                (item for item in tagged if poster and _login(item).lower() == poster), None
            )
        return None if found is None else _ref(kind, int(found["id"]), tag)

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        comment_id = _int(ref.get("id"))
        if comment_id is None:
            raise PermanentCallbackError("the status message reference has no comment id")
        body = with_hidden_tag(text, tag_of(ref))
        if ref.get("kind") == REVIEW_COMMENT:
            self._client.edit_review_comment(self._repo, comment_id, body)
        else:
            self._client.edit_comment(self._repo, comment_id, body)

    def acknowledge(self) -> None:
        comment_id = comment_of(self._trigger)
        kind = self._part.comment_kind
        if comment_id is None:
            return  # a label, an assignment or a review body: nothing to react to
        if kind == ISSUE_COMMENT:
            self._client.react(self._repo, comment_id)
        elif kind == REVIEW_COMMENT:
            self._client.react_to_review_comment(self._repo, comment_id)

    def history(self) -> History:
        items = self._client.issue_comments(self._repo, self._number, HISTORY_LIMIT)
        reviews: list[dict[str, Any]] = []
        if is_pull(self._trigger):
            reviews = self._client.review_comments(self._repo, self._number, HISTORY_LIMIT)
        ours = self._ours([*items, *reviews])
        comments = tuple(
            Comment(_login(item), str(item.get("body") or "")) for item in items if not ours(item)
        )
        return History(comments, _threads(reviews, ours, self._resolved()) if reviews else ())

    def _resolved(self) -> frozenset[int]:
        """The roots of the resolved threads, which only GraphQL tells. Without them (GraphQL
        refused or unreachable) a thread counts as answered when the bot spoke last."""
        try:
            return resolved_roots(self._client, self._repo, self._number)
        except CallbackError as error:
            log(logger, logging.WARNING, "github.threads_unread", error=str(error))
            return frozenset()

    def _ours(self, items: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], bool]:
        """Which comments are the bot's own: its account's, or tagged ones by the user whose
        token the job posts with (asked of GitHub only when a tagged comment not by the bot
        exists). A tag on anyone else's comment is a forgery and does not count."""
        bot = self._client.bot_name
        tagged = [item for item in items if _tagged(item) and not _by_bot(item, bot)]
        poster = (self._client.authenticated_login() or "").lower() if tagged else ""

        def ours(item: Mapping[str, Any]) -> bool:
            by_poster = bool(poster) and _login(item).lower() == poster
            return _by_bot(item, self._client.bot_name) or (_tagged(item) and by_poster)

        return ours


def _ref(kind: str, comment_id: int, tag: str | None) -> dict[str, Any]:
    return {"kind": kind, "id": comment_id, "tag": tag}


def _login(item: Mapping[str, Any]) -> str:
    user = item.get("user") or {}
    return str(user.get("login") or "someone")


def _by_bot(item: Mapping[str, Any], bot_name: str) -> bool:
    """Written by the bot: the App's `<name>[bot]` account, or a user account of that name."""
    return _login(item).lower().removesuffix("[bot]") == bot_name.lower()


def _tagged(item: Mapping[str, Any]) -> bool:
    return has_hidden_tag(str(item.get("body") or ""))


def _threads(
    items: list[dict[str, Any]],
    ours: Callable[[Mapping[str, Any]], bool],
    resolved: frozenset[int] = frozenset(),
) -> tuple[ReviewThread, ...]:
    """Review comments grouped by the comment that started each thread. GitHub's REST API says
    nothing of resolved threads (`resolved` holds the roots GraphQL says are); one whose last
    comment is the bot's counts as answered."""
    roots: dict[int, dict[str, Any]] = {}
    replies: dict[int, list[Comment]] = {}
    last_ours: dict[int, bool] = {}
    for item in items:
        root = _int(item.get("in_reply_to_id")) or _int(item.get("id"))
        if root is None:
            continue
        roots.setdefault(root, item)
        last_ours[root] = ours(item)
        if not ours(item):
            replies.setdefault(root, []).append(Comment(_login(item), str(item.get("body") or "")))
    return tuple(
        ReviewThread(
            path=first.get("path"),
            line=_int(first.get("line")),
            comments=tuple(replies.get(root, [])),
            id=str(root),
            diff_hunk=str(first.get("diff_hunk") or "") or None,
            answered=last_ours[root],
            resolved=root in resolved,
            where=(("comment_kind", REVIEW_COMMENT), ("in_reply_to_id", root)),
        )
        for root, first in roots.items()
        if replies.get(root)
    )


class GitHubForge:
    """Repositories, permissions, git auth and pull requests, as the job's GitHub identity."""

    def __init__(
        self,
        client: GitHubClient,
        trigger: TaskTrigger,
        requester_id: int | None,
        settings: Settings,
    ):
        self._client = client
        self._trigger = trigger
        self._requester_id = requester_id
        self._settings = settings

    def repository(self, full_name: str) -> RepoInfo:
        clone_url, default_branch = self._client.repository(full_name)
        return RepoInfo(full_name, clone_url, default_branch)

    def can_write(self, full_name: str, user: ForgeUser) -> bool:
        if not user.login:
            raise PermanentCallbackError("the GitHub account has no login to check")
        return self._client.can_write(full_name, user.login)

    def git_env(self, clone_url: str) -> dict[str, str]:
        return git_auth_env(
            clone_url, token_for_job(self._trigger, self._requester_id, self._settings)
        )

    def find_open_pull(self, full_name: str, head: str) -> PullInfo | None:
        return self._client.find_open_pull(full_name, head)

    def get_pull(self, full_name: str, number: int) -> PullInfo:
        return self._client.get_pull(full_name, number)

    def open_draft_pull(
        self, full_name: str, head: str, base: str, title: str, body: str
    ) -> PullInfo:
        return self._client.open_draft_pull(full_name, head, base, title, body)

    def edit_pull_body(self, full_name: str, number: int, body: str) -> None:
        self._client.edit_pull_body(full_name, number, body)


def warm() -> None:
    """`Provider.warm`: this module and the calls a new job's acknowledgements make."""
    api.warm()


def conversation(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> GitHubConversation:
    return GitHubConversation(client_for_job(trigger, requester_id, settings), trigger)


def forge(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> GitHubForge:
    return GitHubForge(
        client_for_job(trigger, requester_id, settings), trigger, requester_id, settings
    )


def resolve_thread(
    trigger: TaskTrigger,
    requester_id: int | None,
    where: Mapping[str, JsonValue],
    settings: Settings,
) -> None:
    """Resolve the review thread a thread reply went to (`where`), as the identity that posted
    the reply; one already resolved is left as it is."""
    repo, number = repo_of(trigger) or "", number_of(trigger)
    # A reply recorded before `where` named only the thread's root also named it `comment_id`.
    root = _int(where.get("in_reply_to_id")) or _int(where.get("comment_id"))
    if not repo or number is None or root is None:
        raise PermanentCallbackError("only a pull request's review thread can be resolved")
    resolve_review_thread(client_for_job(trigger, requester_id, settings), repo, number, root)


def co_author(user: ForgeUser, settings: Settings) -> tuple[str, str]:
    """The person as GitHub credits a commit to them: their no-reply address."""
    login = user.login or user.external_id
    return login, f"{user.external_id}+{login}@users.noreply.github.com"
