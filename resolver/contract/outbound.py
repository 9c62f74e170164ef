"""What the worker and the callback queue need from a provider.

Resolver talks to a provider only through these protocols; `integrations.registry` finds the
provider of a job by name:

- a `Conversation` is where the replies to one trigger go (a GitHub issue or review thread, a
  Slack thread, a Jira or Linear ticket). It is built from the job's trigger (`TaskTrigger`);
- a `Forge` hosts repositories (GitHub, GitLab): permission checks, clone URLs, git auth and
  pull requests.

Every method may raise `TransientCallbackError` (5xx, network, rate limit: retry later,
honouring `retry_after`) or `PermanentCallbackError` (other 4xx, no credential: never retried).
Texts are written in a small Markdown subset (bold, links, inline code, code fences, lists);
each conversation converts it to its own markup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol, TypeAlias

from pydantic import JsonValue


@dataclass(frozen=True)
class Comment:
    """One message written by a user: an issue comment, a Slack reply, a ticket comment."""

    author: str
    body: str


@dataclass(frozen=True)
class ReviewThread:
    """A pull request review thread: the file and line it is about, and its comments."""

    path: str | None
    line: int | None
    comments: tuple[Comment, ...]
    resolved: bool = False
    id: str | None = None
    """The provider's id of the thread (GitHub: its first comment; GitLab: the discussion)."""
    diff_hunk: str | None = None
    answered: bool = False
    """The bot wrote the thread's last comment: nobody has spoken since it answered."""
    where: tuple[tuple[str, JsonValue], ...] = ()
    """The provider's own entries that move the job's conversation into this thread
    (`triggers.in_thread`)."""


@dataclass(frozen=True)
class RepoInfo:
    """A repository as its forge describes it (never built from a hard-coded host)."""

    full_name: str
    clone_url: str
    default_branch: str
    web_url: str | None = None


@dataclass(frozen=True)
class PullInfo:
    """An open pull or merge request."""

    number: int
    url: str
    head: str
    base: str | None = None
    author: str | None = None
    fetch_ref: str | None = None
    """Where the base repository serves the head of a pull request from another repository (a
    fork), e.g. `refs/pull/7/head`; None when the head is a branch of the base repository."""
    fetch_from: str | None = None
    """The clone URL that serves `fetch_ref` when the base repository keeps no copy of a fork's
    head (the fork itself, on the same host); None: the base repository."""
    fetch_commit: str | None = None
    """The head, when `fetch_ref` only reaches it (a merge the forge made of the pull request,
    e.g. `refs/pull/7/merge`); None: the ref's own commit."""


@dataclass(frozen=True)
class ForgeUser:
    """A person on a forge, as their linked identity names them."""

    external_id: str
    login: str | None = None


@dataclass(frozen=True)
class History:
    """What was said around the trigger, oldest first. Written by users: untrusted."""

    comments: tuple[Comment, ...] = ()
    review_threads: tuple[ReviewThread, ...] = ()


MessageRef: TypeAlias = dict[str, JsonValue]
"""A posted message, as its conversation finds it again (JSON, kept on the job's row)."""


class Conversation(Protocol):
    """Replies in the place a trigger came from."""

    def post(self, text: str, tag: str | None = None) -> MessageRef:
        """Post a new message; returns a JSON reference that `edit` accepts. A `tag` (`TAG`,
        such as `status-12`) goes with the message where people do not see it, so that `find`
        can find the message again."""
        ...

    def find(self, tag: str, since: datetime) -> MessageRef | None:
        """The reference of the message the bot posted here with `tag`, at or after `since`;
        None when there is none. A post whose answer was lost (a timeout after the provider made
        it, a worker killed before recording it) is then not made twice."""
        ...

    def edit(self, ref: Mapping[str, JsonValue], text: str) -> None:
        """Replace the text of a message this conversation posted."""
        ...

    def acknowledge(self) -> None:
        """Mark the triggering message as seen (👀); a no-op where there is nothing to mark."""
        ...

    def history(self) -> History:
        """The issue's or ticket's comments, the Slack thread, a PR's review threads (bounded:
        the most recent ones when there are many). The bot's own status messages are left out."""
        ...


class Forge(Protocol):
    """A host of git repositories, acting with the job's credentials."""

    def repository(self, full_name: str) -> RepoInfo: ...

    def can_write(self, full_name: str, user: ForgeUser) -> bool:
        """Whether `user` may push to the repository (GitHub write+, GitLab Developer+)."""
        ...

    def git_env(self, clone_url: str) -> dict[str, str]:
        """Environment for host-side git that authenticates to `clone_url` (nothing on disk)."""
        ...

    def find_open_pull(self, full_name: str, head: str) -> PullInfo | None: ...

    def get_pull(self, full_name: str, number: int) -> PullInfo: ...

    def open_draft_pull(
        self, full_name: str, head: str, base: str, title: str, body: str
    ) -> PullInfo:
        """Open a draft PR/MR; if one from `head` is already open, return that one."""
        ...

    def edit_pull_body(self, full_name: str, number: int, body: str) -> None:
        """Replace the description of a PR/MR (a follow-up's new Verification block)."""
        ...


# The callback actions every provider shares (a callback row's `action`).
STATUS: Final = "status"
REACT: Final = "react"
REPLY: Final = "reply"
OPEN_PULL: Final = "open_pull"
UPDATE_PULL: Final = "update_pull"
NOTICE: Final = "notice"
THREAD_REPLY: Final = "thread_reply"

# What `Conversation.post` tags a message with: what it is and whose (`status-12`: job 12's
# status message, `notice-3`, `reply-40`: the callback that posts a reply).
TAG: Final = re.compile(r"[a-z]+-[0-9]+")
_HIDDEN_TAG: Final = re.compile(r"<!-- resolver:[a-z]+-[0-9]+ -->")


def hidden_tag(tag: str) -> str:
    """`tag` as an HTML comment, for Markdown that hides one (GitHub, GitLab)."""
    if TAG.fullmatch(tag) is None:
        raise ValueError(f"not a message tag: {tag!r}")
    return f"<!-- resolver:{tag} -->"


def with_hidden_tag(text: str, tag: str | None) -> str:
    return text if tag is None else f"{text}\n{hidden_tag(tag)}"


def tag_of(ref: Mapping[str, JsonValue]) -> str | None:
    """The tag a message reference keeps (GitHub, GitLab: to put it back on every edit)."""
    tag = ref.get("tag")
    return tag if isinstance(tag, str) else None


def has_hidden_tag(text: str, tag: str | None = None) -> bool:
    """Whether `text` carries `tag` (any tag when None) as its hidden HTML comment: on its last
    line, where `with_hidden_tag` puts it. A tag anywhere else (quoted by someone, or written by
    the model into a summary) is not ours."""
    last = text.rstrip().rpartition("\n")[2]
    if tag is not None:
        return last == hidden_tag(tag)
    return _HIDDEN_TAG.fullmatch(last) is not None


MAX_BODY: Final = 60_000
"""The most a posted body (a pull request's description, a review's summary) may hold: GitHub
refuses more than 65,536 characters in one, and then the whole post fails; the other forges
take more. Room is left for the hidden tag."""
CUT_MARK: Final = "\n\n… (cut: the rest was too long to post)"
_FENCE_LINE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


def fit_body(text: str, limit: int = MAX_BODY) -> str:
    """`text` as it is, or cut at a line's end to fit `limit` with a mark that says so; a code
    fence the cut leaves open is closed, so the mark is not shown as code."""
    if len(text) <= limit:
        return text
    room = max(limit - len(CUT_MARK) - 8, 0)
    kept = text[:room]
    if "\n" in kept:
        kept = kept[: kept.rindex("\n")]
    fences = _FENCE_LINE.findall(kept)
    closing = f"\n{fences[-1]}" if len(fences) % 2 else ""
    return f"{kept}{closing}{CUT_MARK}"
