"""Forgejo (and Gitea) payloads: the fields we read, nothing more.

The shapes are Forgejo's `modules/structs` (hook.go, issue.go, pull.go, repo.go, user.go), which
Gitea shares; versions add fields, so every model ignores what it does not read.
"""

from __future__ import annotations

from typing import Any, Final

from resolver.contract.inbound import (
    Headers,
    MalformedError,
    Sender,
    VendorModel,
    WebhookEvent,
    check_storable,
    validated,
)

# Forgejo sends each header under its own name and under Gitea's; Gitea only under its own.
EVENT_TYPE_HEADERS: Final = ("x-forgejo-event-type", "x-gitea-event-type")
EVENT_HEADERS: Final = ("x-forgejo-event", "x-gitea-event")
DELIVERY_HEADERS: Final = ("x-forgejo-delivery", "x-gitea-delivery")


def _first(headers: Headers, names: tuple[str, ...]) -> str | None:
    return next((headers[name] for name in names if headers.get(name)), None)


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key `<X-Forgejo-Event-Type>.<action>` (`push` has no action); delivery key the
    `X-Forgejo-Delivery` UUID.

    The event *type* header is the precise one: `X-Forgejo-Event` says `issue_comment` for a
    comment on a pull request too, and `pull_request_comment` for a review. A Gitea too old to
    send the type falls back to the event header, whose keys no route knows.
    """
    name = _first(headers, EVENT_TYPE_HEADERS) or _first(headers, EVENT_HEADERS)
    delivery = _first(headers, DELIVERY_HEADERS)
    if not name or not delivery:
        raise MalformedError("missing X-Forgejo-Event-Type or X-Forgejo-Delivery")
    check_storable(body)
    action = validated(Action, WebhookEvent(name, delivery, body=body)).action
    key = f"{name}.{action}" if isinstance(action, str) and action else name
    return WebhookEvent(key, delivery, body=body)


class Action(VendorModel):
    action: Any = None


class User(VendorModel):
    id: int
    login: str

    def as_sender(self) -> Sender:
        # The API says nothing of bots; the system's own accounts have negative ids (the
        # ghost user is -1, the Actions user -2).
        return Sender(external_id=str(self.id), login=self.login, is_bot=self.id < 0)


class Label(VendorModel):
    name: str


class Repository(VendorModel):
    full_name: str
    clone_url: str | None = None
    default_branch: str | None = None
    html_url: str | None = None
    private: bool | None = None


class Issue(VendorModel):
    number: int
    title: str = ""
    body: str | None = None
    html_url: str | None = None
    labels: list[Label] | None = None
    assignees: list[User] | None = None
    pull_request: dict[str, Any] | None = None  # set when the issue is a pull request


class Comment(VendorModel):
    id: int
    body: str | None = None
    html_url: str | None = None


class Branch(VendorModel):
    ref: str
    sha: str | None = None


class PullRequest(VendorModel):
    number: int
    title: str = ""
    body: str | None = None
    html_url: str | None = None
    head: Branch | None = None
    base: Branch | None = None
    user: User | None = None


class Review(VendorModel):
    """A submitted review: `type` is its event type (`pull_request_review_comment`, …), and
    `content` its body. Forgejo sends no review id."""

    type: str = ""
    content: str | None = None


class Envelope(VendorModel):
    repository: Repository
    sender: User


class IssueCommentEvent(Envelope):
    """`issue_comment` and `pull_request_comment`: a new comment in a conversation (a reply in
    a review thread too, which Forgejo does not tell apart)."""

    issue: Issue
    comment: Comment
    pull_request: PullRequest | None = None
    is_pull: bool = False


class IssueEvent(Envelope):
    """`issue_assign` and `issue_label`: the issue as it is after the change."""

    issue: Issue


class ReviewEvent(Envelope):
    """`pull_request_review_comment`, `_rejected` and `_approved`: one delivery per review."""

    pull_request: PullRequest
    review: Review | None = None


class PushCommit(VendorModel):
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


class PushEvent(Envelope):
    """A push to a branch or a tag; `sender` is the pusher."""

    ref: str
    after: str
    commits: tuple[PushCommit, ...] | None = None
    total_commits: int | None = None
