"""Forgejo as a conversation (an issue's or a pull request's comments) and as a forge.

Both are built from values (`conversation_for`, `forge_for`); the descriptor's `conversation`
and `forge` read the repository, the number and the comment from the job's trigger and build
them with the client of the job's identity (`tokens.JobToken`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlsplit

from integrations.forgejo.client import ForgejoClient, TokenProvider
from integrations.forgejo.settings import ForgejoSettings
from integrations.forgejo.tokens import JobToken, instance
from integrations.toolkit.git import basic, repository_header_env
from resolver.contract.errors import PermanentCallbackError
from resolver.contract.outbound import (
    Comment,
    Conversation,
    Forge,
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
from resolver.core.settings import Settings

ISSUE_COMMENT: Final = "issue_comment"
HISTORY_LIMIT: Final = 50
# Forgejo takes a token as the password of any user name over HTTP Basic (services/auth/basic.go).
GIT_USER: Final = "oauth2"


class ForgejoConversation:
    """The comments of one issue or pull request of `repo` (`is_pull`: its review threads
    too); `comment_id` is the comment that asked, if a comment did (a label, an assignment or
    a review has none to react to)."""

    def __init__(
        self,
        client: ForgejoClient,
        repo: str,
        number: int,
        *,
        bot_name: str,
        comment_id: int | None = None,
        is_pull: bool = False,
    ) -> None:
        self._client = client
        self._is_pull = is_pull
        self._repo = repo
        self._number = number
        self._bot = bot_name.lower()
        self._comment_id = comment_id

    def post(self, text: str, tag: str | None = None) -> dict[str, Any]:
        """The tag is a hidden HTML comment in the text; the reference keeps it for edits."""
        comment_id = self._client.post_comment(self._repo, self._number, with_hidden_tag(text, tag))
        return _ref(comment_id, tag)

    def find(self, tag: str, since: datetime) -> dict[str, Any] | None:
        """The newest comment with `tag` since `since`: the bot's, or (a job acting with a
        person's token) that person's. A tag on anyone else's comment is not ours."""
        items = self._client.issue_comments(self._repo, self._number, since)
        tagged = [item for item in reversed(items) if has_hidden_tag(_body(item), tag)]
        found = next((item for item in tagged if _login(item) == self._bot), None)
        if found is None and tagged:
            poster = self._client.authenticated_login().lower()
            found = next((item for item in tagged if _login(item) == poster), None)
        return None if found is None else _ref(int(found["id"]), tag)

    def edit(self, ref: Mapping[str, Any], text: str) -> None:
        comment_id = ref.get("id")
        if not isinstance(comment_id, int):
            raise PermanentCallbackError("the status message reference has no comment id")
        self._client.edit_comment(self._repo, comment_id, with_hidden_tag(text, tag_of(ref)))

    def acknowledge(self) -> None:
        """👀 on the comment that asked."""
        if self._comment_id is not None:
            self._client.react(self._repo, self._comment_id)

    def history(self) -> History:
        """The newest HISTORY_LIMIT comments that are not the bot's own, and on a pull request
        its review threads. The bot's own: its account's, or tagged ones by the person whose
        token it posts with (asked of Forgejo only when such a comment exists)."""
        items = self._client.issue_comments(self._repo, self._number)[-HISTORY_LIMIT:]
        reviews = self._client.review_comments(self._repo, self._number) if self._is_pull else []
        ours = self._ours([*items, *reviews])
        comments = tuple(Comment(_author(i), _body(i)) for i in items if not ours(i))
        return History(comments, _threads(reviews, ours))

    def _ours(self, items: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], bool]:
        tagged = [i for i in items if has_hidden_tag(_body(i)) and _login(i) != self._bot]
        poster = self._client.authenticated_login().lower() if tagged else None

        def ours(item: Mapping[str, Any]) -> bool:
            login = _login(item)
            return login == self._bot or (login == poster and has_hidden_tag(_body(item)))

        return ours


def _threads(
    items: list[dict[str, Any]], ours: Callable[[Mapping[str, Any]], bool]
) -> tuple[ReviewThread, ...]:
    """Review comments as threads: Forgejo keeps one per file and line (a negative line is on
    the old side). A thread whose last comment is the bot's counts as answered; one with a
    `resolver` as resolved."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for item in sorted(items, key=lambda i: int(i["id"])):
        line = int(item.get("position") or 0) or -int(item.get("original_position") or 0)
        groups.setdefault((str(item.get("path") or ""), line), []).append(item)
    return tuple(
        ReviewThread(
            path=path or None,
            line=abs(line) or None,
            comments=tuple(Comment(_author(i), _body(i)) for i in group if not ours(i)),
            resolved=group[0].get("resolver") is not None,
            id=str(group[0]["id"]),
            diff_hunk=str(group[0].get("diff_hunk") or "") or None,
            answered=ours(group[-1]),
        )
        for (path, line), group in groups.items()
        if not all(ours(i) for i in group)
    )


def _ref(comment_id: int, tag: str | None) -> dict[str, Any]:
    return {"kind": ISSUE_COMMENT, "id": comment_id, "tag": tag}


def _author(item: Mapping[str, Any]) -> str:
    user = item.get("user") or {}
    return str(user.get("login") or "someone")


def _login(item: Mapping[str, Any]) -> str:
    return _author(item).lower()


def _body(item: Mapping[str, Any]) -> str:
    return str(item.get("body") or "")


class ForgejoForge:
    """Repositories, permissions, git auth and pull requests, as the job's identity on the
    instance (`token`: the bot's, or a person's OAuth token)."""

    def __init__(self, client: ForgejoClient, token: TokenProvider) -> None:
        self._client = client
        self._token = token

    def repository(self, full_name: str) -> RepoInfo:
        return self._client.repository(full_name)

    def can_write(self, full_name: str, user: ForgeUser) -> bool:
        if not user.login:
            raise PermanentCallbackError("the Forgejo account has no login to check")
        return self._client.can_write(full_name, user.login)

    def git_env(self, clone_url: str) -> dict[str, str]:
        return git_auth_env(clone_url, self._token())

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


def git_auth_env(clone_url: str, token: str) -> dict[str, str]:
    """Environment for host-side git that sends the token as Basic auth to `clone_url`'s
    repository only."""
    return repository_header_env(clone_url, token, basic(GIT_USER, token), forge="Forgejo")


def conversation_for(
    client: ForgejoClient,
    repo: str,
    number: int,
    *,
    bot_name: str,
    comment_id: int | None,
    is_pull: bool,
) -> Conversation:
    """The conversation protocol's Forgejo side (mypy checks that it is one)."""
    return ForgejoConversation(
        client, repo, number, bot_name=bot_name, comment_id=comment_id, is_pull=is_pull
    )


def forge_for(client: ForgejoClient, token: TokenProvider) -> Forge:
    """The forge protocol's Forgejo side (mypy checks that it is one)."""
    return ForgejoForge(client, token)


def _job_client(
    requester_id: int | None, settings: Settings
) -> tuple[ForgejoClient, TokenProvider, Settings]:
    token = JobToken(requester_id, settings)
    url = instance(settings)
    return ForgejoClient(url, token, user_agent=f"Resolver ({settings.bot_name})"), token, settings


def conversation(
    trigger: TaskTrigger, requester_id: int | None, settings: Settings
) -> Conversation:
    """The conversation of a trigger recorded by `integrations.forgejo.routes`: an issue's or a
    pull request's comments."""
    repo, number = repo_of(trigger), number_of(trigger)
    if repo is None or number is None:
        raise PermanentCallbackError(f"a Forgejo conversation is on an issue, not a {trigger.kind}")
    client, _, settings = _job_client(requester_id, settings)
    return ForgejoConversation(
        client,
        repo,
        number,
        bot_name=settings.bot_name,
        comment_id=comment_of(trigger),
        is_pull=is_pull(trigger),
    )


def forge(trigger: TaskTrigger, requester_id: int | None, settings: Settings) -> Forge:
    client, token, _ = _job_client(requester_id, settings)
    return ForgejoForge(client, token)


def open_pulls(
    trigger: TaskTrigger, requester_id: int | None, full_name: str, base: str, settings: Settings
) -> tuple[PullInfo, ...]:
    """The open pull requests into `base` (`conflicts: fix` on a push to it)."""
    client, _, _ = _job_client(requester_id, settings)
    return client.open_pulls(full_name, base)


def co_author(user: ForgeUser, settings: Settings) -> tuple[str, str]:
    """The person as Forgejo credits a commit to them: `<login>@noreply.<host>`, the address
    it shows for a hidden e-mail (`[service] NO_REPLY_ADDRESS`'s default)."""
    login = user.login or user.external_id
    url = ForgejoSettings.of(settings).url or ""
    host = urlsplit(url).hostname or "localhost"
    return login, f"{login.lower()}@noreply.{host}"
