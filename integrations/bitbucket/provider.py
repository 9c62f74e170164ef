"""Bitbucket as a conversation (a pull request's comments) and as a forge.

Both are built from values (`conversation_for`, `forge_for`); the descriptor's `conversation`
and `forge` read the repository, the number and the comment from the job's trigger and build
them with the client of the job's identity (`tokens.JobToken`). The REST 2.0 client serves
Bitbucket Cloud: Data Center's events make no job (`routes`), and one stored before they were
refused is refused here, with a clear error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from integrations.bitbucket.client import BitbucketClient, TokenProvider
from integrations.bitbucket.tokens import JobToken, api_url
from integrations.bitbucket.trigger import DATA_CENTER, UNKNOWN_PULL, reach_of
from integrations.toolkit.git import basic, repository_header_env
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import (
    TAG,
    Comment,
    Conversation,
    Forge,
    ForgeUser,
    History,
    PullInfo,
    RepoInfo,
    ReviewThread,
    tag_of,
)
from resolver.contract.triggers import CiFailure, TaskTrigger, number_of, repo_of
from resolver.core.settings import Settings

PULL_COMMENT: Final = "pullrequest_comment"
HISTORY_LIMIT: Final = 50
# Bitbucket takes an access token as the password of the user `x-token-auth` over HTTPS.
GIT_USER: Final = "x-token-auth"
# Bitbucket's Markdown shows an HTML comment as text; an empty link reference is hidden.
_HIDDEN: Final = re.compile(r"\[//\]: # \(resolver:([a-z]+-[0-9]+)\)")


def hidden_tag(tag: str) -> str:
    if TAG.fullmatch(tag) is None:
        raise ValueError(f"not a message tag: {tag!r}")
    return f"[//]: # (resolver:{tag})"


def with_tag(text: str, tag: str | None) -> str:
    return text if tag is None else f"{text}\n\n{hidden_tag(tag)}"


def tagged(text: str, tag: str | None = None) -> bool:
    """Whether `text` ends with `tag` (any tag when None) as its hidden line."""
    found = _HIDDEN.fullmatch(text.rstrip().rpartition("\n")[2])
    return found is not None and (tag is None or found.group(1) == tag)


class BitbucketConversation:
    """The comments of one pull request of `repo`; the bot's own are those of the account its
    token acts for (asked of Bitbucket once, when a tagged comment is looked for)."""

    def __init__(self, client: BitbucketClient, repo: str, number: int) -> None:
        self._client, self._repo, self._number = client, repo, number
        self._me: str | None = None

    def _own_uuid(self) -> str:
        if self._me is None:
            self._me = str(self._client.authenticated_user().get("uuid") or "")
        return self._me

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        comment_id = self._client.post_comment(self._repo, self._number, with_tag(text, tag))
        return {"kind": PULL_COMMENT, "id": comment_id, "tag": tag}

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        """The newest comment of ours with `tag` made at or after `since`."""
        items = self._client.comments(self._repo, self._number)
        for item in reversed(items):
            if (
                tagged(_body(item), tag)
                and _made(item) >= since
                and _uuid(item) == self._own_uuid()
            ):
                return {"kind": PULL_COMMENT, "id": int(item["id"]), "tag": tag}
        return None

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        comment_id = ref.get("id")
        if not isinstance(comment_id, int):
            raise PermanentCallbackError("the status message reference has no comment id")
        body = with_tag(text, tag_of(ref))
        self._client.edit_comment(self._repo, self._number, comment_id, body)

    def acknowledge(self) -> None:
        """Bitbucket has no reactions: the status comment, posted at intake, is the answer."""

    def history(self) -> History:
        """The newest HISTORY_LIMIT comments on the conversation that are not the bot's, and
        the comments on lines of the diff as threads (a root comment and its answers)."""
        items = [i for i in self._client.comments(self._repo, self._number) if not i.get("deleted")]
        ours = self._ours(items)
        lines = [i for i in items if i.get("inline")]
        general = [i for i in items if not i.get("inline") and not ours(i)][-HISTORY_LIMIT:]
        comments = tuple(Comment(_author(i), _body(i)) for i in general)
        return History(comments, _threads(lines, ours))

    def _ours(self, items: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], bool]:
        me = self._own_uuid() if any(tagged(_body(i)) for i in items) else None

        def ours(item: Mapping[str, Any]) -> bool:
            return me is not None and _uuid(item) == me

        return ours


def _threads(
    items: list[dict[str, Any]], ours: Callable[[Mapping[str, Any]], bool]
) -> tuple[ReviewThread, ...]:
    """Comments on lines as threads, each under its root comment (answers name a `parent`).
    A thread whose last comment is the bot's counts as answered."""
    by_id = {int(i["id"]): i for i in items}
    groups: dict[int, list[dict[str, Any]]] = {}
    for item in sorted(items, key=lambda i: int(i["id"])):
        groups.setdefault(_root(by_id, int(item["id"])), []).append(item)
    threads = []
    for root, group in groups.items():
        inline = by_id[root].get("inline") or {}
        threads.append(
            ReviewThread(
                path=str(inline.get("path") or "") or None,
                line=inline.get("to") or inline.get("from"),
                comments=tuple(Comment(_author(i), _body(i)) for i in group if not ours(i)),
                id=str(root),
                answered=ours(group[-1]),
            )
        )
    return tuple(t for t in threads if t.comments)


def _root(by_id: Mapping[int, Mapping[str, Any]], comment_id: int) -> int:
    """The first comment of the thread `comment_id` answers in (a chain of parents among the
    line comments; a parent chain that loops stops where it would repeat)."""
    seen = {comment_id}
    parent = by_id[comment_id].get("parent")
    while isinstance(parent, Mapping) and parent.get("id") in by_id and parent["id"] not in seen:
        comment_id = int(parent["id"])
        seen.add(comment_id)
        parent = by_id[comment_id].get("parent")
    return comment_id


def _author(item: Mapping[str, Any]) -> str:
    user = item.get("user") or {}
    return str(user.get("nickname") or user.get("display_name") or "someone")


def _uuid(item: Mapping[str, Any]) -> str:
    return str((item.get("user") or {}).get("uuid") or "")


def _body(item: Mapping[str, Any]) -> str:
    return str((item.get("content") or {}).get("raw") or "")


def _made(item: Mapping[str, Any]) -> datetime:
    """When the comment was made; a comment without a readable time counts as made now."""
    try:
        return datetime.fromisoformat(str(item.get("created_on")).replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)


class BitbucketForge:
    """Repositories, permissions, git auth and pull requests, as the job's identity. A red
    check's pull request is known by its branch (`from_branch`): pull request UNKNOWN_PULL is
    the bot's open one from there."""

    def __init__(
        self, client: BitbucketClient, token: TokenProvider, from_branch: str | None = None
    ) -> None:
        self._client = client
        self._token = token
        self._from_branch = from_branch

    def repository(self, full_name: str) -> RepoInfo:
        return self._client.repository(full_name)

    def can_write(self, full_name: str, user: ForgeUser) -> bool:
        """By the person's uuid (their linked identity's external id)."""
        return self._client.can_write(full_name, user.external_id)

    def git_env(self, clone_url: str) -> dict[str, str]:
        return git_auth_env(clone_url, self._token())

    def find_open_pull(self, full_name: str, head: str) -> PullInfo | None:
        return self._client.find_open_pull(full_name, head)

    def get_pull(self, full_name: str, number: int) -> PullInfo:
        if number == UNKNOWN_PULL and self._from_branch:
            return open_pull_from(self._client, full_name, self._from_branch)
        return self._client.get_pull(full_name, number)

    def open_draft_pull(
        self, full_name: str, head: str, base: str, title: str, body: str
    ) -> PullInfo:
        return self._client.open_draft_pull(full_name, head, base, title, body)

    def edit_pull_body(self, full_name: str, number: int, body: str) -> None:
        self._client.edit_pull_body(full_name, number, body)


def git_auth_env(clone_url: str, token: str) -> dict[str, str]:
    """Environment for host-side git that sends the token as Basic auth (`x-token-auth`) to
    `clone_url`'s repository only."""
    return repository_header_env(clone_url, token, basic(GIT_USER, token), forge="Bitbucket")


def open_pull_from(client: BitbucketClient, full_name: str, branch: str) -> PullInfo:
    found = client.find_open_pull(full_name, branch)
    if found is None:
        raise PermanentCallbackError(f"no open pull request from {branch} in {full_name}")
    return found


def _unknown_pull_branch(trigger: TaskTrigger) -> str | None:
    """The branch of a red check's pull request, when the trigger names no number."""
    if number_of(trigger) != UNKNOWN_PULL or not isinstance(trigger, CiFailure):
        return None
    return trigger.head_ref


def conversation_for(client: BitbucketClient, repo: str, number: int) -> Conversation:
    """The conversation protocol's Bitbucket side (mypy checks that it is one)."""
    return BitbucketConversation(client, repo, number)


def forge_for(client: BitbucketClient, token: TokenProvider) -> Forge:
    """The forge protocol's Bitbucket side (mypy checks that it is one)."""
    return BitbucketForge(client, token)


def job_token(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> JobToken:
    """The job's identity on Bitbucket Cloud (a Data Center trigger has none here)."""
    if reach_of(trigger).product == DATA_CENTER:
        raise PermanentCallbackError(
            "this event came from Bitbucket Data Center, whose REST API Resolver does not speak "
            "yet: it answers on Bitbucket Cloud only"
        )
    return JobToken(requester_id, settings)


def user_agent(settings: Settings) -> str:
    return f"Resolver ({settings.bot_name})"


def job_client(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> tuple[BitbucketClient, TokenProvider, Settings]:
    token = job_token(trigger, requester_id, settings)
    client = BitbucketClient(api_url(settings), token, user_agent=user_agent(settings))
    return client, token, settings


def conversation(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> Conversation:
    """The conversation of a trigger recorded by `integrations.bitbucket.routes`: a pull
    request's comments."""
    repo, number = repo_of(trigger), number_of(trigger)
    if repo is None or number is None:
        raise PermanentCallbackError(
            f"a Bitbucket conversation is on a pull request, not a {trigger.kind}"
        )
    client, _, _ = job_client(trigger, requester_id, settings)
    branch = _unknown_pull_branch(trigger)
    if branch is not None:
        number = open_pull_from(client, repo, branch).number
    return BitbucketConversation(client, repo, number)


def forge(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> Forge:
    client, token, _ = job_client(trigger, requester_id, settings)
    return BitbucketForge(client, token, _unknown_pull_branch(trigger))


def open_pulls(
    trigger: TaskTrigger, requester_id: int | None, full_name: str, base: str, settings: Settings
) -> tuple[PullInfo, ...]:
    """The open pull requests into `base` (`conflicts: fix` on a push to it)."""
    client, _, _ = job_client(trigger, requester_id, settings)
    return client.open_pulls(full_name, base)
