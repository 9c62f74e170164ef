"""Bitbucket payloads, Cloud's and Data Center's: the fields we read, nothing more.

Cloud's shapes are its REST 2.0 objects (`account`, `repository`, `pullrequest`,
`pullrequest_comment`), as its event payloads page describes them; Data Center's are its REST
1.0 objects (`user`, `repository` with its `project`, `pullRequest` with `fromRef` and `toRef`).
Every model ignores what it does not read.
"""

from __future__ import annotations

from typing import Final

from pydantic import Field

from resolver.contract.inbound import (
    Headers,
    MalformedError,
    Sender,
    VendorModel,
    WebhookEvent,
    check_storable,
)

EVENT_HEADER: Final = "x-event-key"
# Cloud names a delivery `X-Request-UUID`, Data Center `X-Request-Id`.
DELIVERY_HEADERS: Final = ("x-request-uuid", "x-request-id")


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key the `X-Event-Key` (`pullrequest:comment_created`, `pr:comment:added`); delivery key
    the request's UUID. The routes validate their model straight from the body."""
    key = headers.get(EVENT_HEADER)
    delivery = next((headers[name] for name in DELIVERY_HEADERS if headers.get(name)), None)
    if not key or not delivery:
        raise MalformedError("missing X-Event-Key or X-Request-UUID (X-Request-Id)")
    check_storable(body)
    if not body.lstrip().startswith(b"{"):
        raise MalformedError("body is not a JSON object")
    return WebhookEvent(key, delivery, body=body)


# --- Bitbucket Cloud -----------------------------------------------------------------------


class Link(VendorModel):
    href: str | None = None


class Links(VendorModel):
    html: Link | None = None


class Account(VendorModel):
    """A person (`user`), or an access token's or app's bot (`app_user`), or a workspace."""

    uuid: str
    nickname: str | None = None
    display_name: str | None = None
    account_id: str | None = None
    type: str = "user"

    def as_sender(self) -> Sender:
        login = self.nickname or self.display_name
        return Sender(external_id=self.uuid, login=login, is_bot=self.type != "user")


class Named(VendorModel):
    name: str


class Repository(VendorModel):
    full_name: str
    uuid: str | None = None
    links: Links | None = None
    mainbranch: Named | None = None
    """Not in every payload: the repository's API answer carries it."""

    @property
    def web_url(self) -> str | None:
        return self.links.html.href if self.links and self.links.html else None


class Commit(VendorModel):
    hash: str | None = None


class Endpoint(VendorModel):
    """A pull request's source or destination: its branch and commit."""

    branch: Named | None = None
    commit: Commit | None = None


class PullRequest(VendorModel):
    id: int
    title: str = ""
    description: str | None = None
    state: str | None = None
    author: Account | None = None
    source: Endpoint | None = None
    destination: Endpoint | None = None
    links: Links | None = None
    draft: bool | None = None


class Content(VendorModel):
    raw: str | None = None


class Inline(VendorModel):
    path: str
    to: int | None = None
    from_: int | None = Field(default=None, alias="from")


class Parent(VendorModel):
    id: int


class Comment(VendorModel):
    id: int
    content: Content | None = None
    inline: Inline | None = None
    parent: Parent | None = None
    links: Links | None = None

    @property
    def text(self) -> str | None:
        return self.content.raw if self.content else None


class Envelope(VendorModel):
    actor: Account
    repository: Repository


class PullRequestEvent(Envelope):
    """`pullrequest:created` and the review events: the pull request as it is."""

    pullrequest: PullRequest


class CommentEvent(PullRequestEvent):
    """`pullrequest:comment_created`: a new comment, on the conversation or on a line."""

    comment: Comment


class StatusLinks(VendorModel):
    commit: Link | None = None


class CommitStatus(VendorModel):
    key: str
    name: str | None = None
    state: str
    description: str | None = None
    url: str | None = None
    refname: str | None = None
    links: StatusLinks | None = None

    @property
    def commit(self) -> str | None:
        """The commit's hash, the last part of its link (the payload has no other)."""
        href = self.links.commit.href if self.links and self.links.commit else None
        return href.rstrip("/").rpartition("/")[2] if href else None


class CommitStatusEvent(Envelope):
    """`repo:commit_status_created` and `_updated`: a build's state on a commit."""

    commit_status: CommitStatus


class Target(VendorModel):
    hash: str


class RefState(VendorModel):
    type: str
    name: str
    target: Target | None = None


class Change(VendorModel):
    new: RefState | None = None
    closed: bool = False


class Push(VendorModel):
    changes: list[Change]


class PushEvent(Envelope):
    """`repo:push`: one delivery for all the refs a push changed."""

    push: Push


# --- Bitbucket Data Center -----------------------------------------------------------------


class ServerUser(VendorModel):
    id: int
    name: str | None = None
    slug: str | None = None
    displayName: str | None = None
    type: str = "NORMAL"

    def as_sender(self) -> Sender:
        # A service account (`SERVICE`) is a bot: an add-on's or an access token's.
        login = self.slug or self.name
        return Sender(external_id=str(self.id), login=login, is_bot=self.type != "NORMAL")


class Project(VendorModel):
    key: str


class ServerRepository(VendorModel):
    slug: str
    project: Project

    @property
    def full_name(self) -> str:
        return f"{self.project.key}/{self.slug}"


class ServerRef(VendorModel):
    id: str
    displayId: str | None = None
    latestCommit: str | None = None
    repository: ServerRepository | None = None


class Participant(VendorModel):
    user: ServerUser


class ServerPullRequest(VendorModel):
    id: int
    title: str = ""
    description: str | None = None
    fromRef: ServerRef
    toRef: ServerRef
    author: Participant | None = None


class ServerComment(VendorModel):
    id: int
    text: str | None = None


class ServerCommentEvent(VendorModel):
    """`pr:comment:added`."""

    actor: ServerUser
    pullRequest: ServerPullRequest
    comment: ServerComment


class ServerChange(VendorModel):
    ref: ServerRef
    toHash: str
    type: str


class ServerPushEvent(VendorModel):
    """`repo:refs_changed`."""

    actor: ServerUser
    repository: ServerRepository
    changes: list[ServerChange]
