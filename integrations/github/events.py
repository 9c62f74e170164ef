"""GitHub payloads: the fields we read, nothing more (GHES and old payloads vary)."""

from __future__ import annotations

from typing import Any

from resolver.contract.inbound import (
    Headers,
    MalformedError,
    Sender,
    VendorModel,
    WebhookEvent,
    check_storable,
    validated,
)


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key `<X-GitHub-Event>.<action>`; delivery key `<hook id>:<X-GitHub-Delivery>`.

    The GUID alone is not unique: two hooks subscribed to one event get the same one.
    """
    name = headers.get("x-github-event")
    delivery = headers.get("x-github-delivery")
    if not name or not delivery:
        raise MalformedError("missing X-GitHub-Event or X-GitHub-Delivery")
    # Only the action is read here; a route validates its own model from the raw body.
    check_storable(body)
    action = validated(Action, WebhookEvent(name, delivery, body=body)).action
    key = f"{name}.{action}" if isinstance(action, str) and action else name
    return WebhookEvent(key, f"{headers.get('x-github-hook-id', '')}:{delivery}", body=body)


class Action(VendorModel):
    action: Any = None


class User(VendorModel):
    login: str
    id: int
    type: str = "User"

    def as_sender(self) -> Sender:
        is_bot = self.type == "Bot" or self.login.lower().endswith("[bot]")
        return Sender(external_id=str(self.id), login=self.login, is_bot=is_bot)


class Label(VendorModel):
    name: str


class Repository(VendorModel):
    full_name: str
    clone_url: str | None = None
    default_branch: str | None = None
    html_url: str | None = None
    private: bool | None = None


class Installation(VendorModel):
    id: int


class Issue(VendorModel):
    number: int
    title: str = ""
    body: str | None = None
    html_url: str | None = None
    pull_request: dict[str, Any] | None = None  # present when the issue is a pull request


class Comment(VendorModel):
    id: int
    body: str | None = None
    html_url: str | None = None


class ReviewComment(Comment):
    path: str | None = None
    line: int | None = None
    start_line: int | None = None
    side: str | None = None
    diff_hunk: str | None = None
    commit_id: str | None = None
    in_reply_to_id: int | None = None
    pull_request_review_id: int | None = None


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
    id: int
    body: str | None = None
    state: str | None = None
    html_url: str | None = None


class Envelope(VendorModel):
    repository: Repository
    sender: User
    installation: Installation | None = None


class IssueCommentEvent(Envelope):
    issue: Issue
    comment: Comment


class ReviewCommentEvent(Envelope):
    pull_request: PullRequest
    comment: ReviewComment


class ReviewEvent(Envelope):
    pull_request: PullRequest
    review: Review


class IssueLabelEvent(Envelope):
    issue: Issue
    label: Label | None = None


class IssueAssignEvent(Envelope):
    issue: Issue
    assignee: User | None = None


class CheckOutput(VendorModel):
    title: str | None = None
    summary: str | None = None


class CheckApp(VendorModel):
    slug: str | None = None


class CheckRun(VendorModel):
    id: int
    name: str = ""
    head_sha: str
    conclusion: str | None = None
    html_url: str | None = None
    output: CheckOutput | None = None
    app: CheckApp | None = None
    pull_requests: list[PullRequest] = []


class CheckRunEvent(Envelope):
    check_run: CheckRun


class PushCommit(VendorModel):
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


class PushEvent(Envelope):
    """https://docs.github.com/webhooks/webhook-events-and-payloads#push"""

    ref: str
    after: str
    deleted: bool = False
    commits: tuple[PushCommit, ...] | None = None
