"""Azure DevOps service-hook notifications: the fields we read, nothing more.

Every delivery is one `Notification` (the event's `eventType`, and a `notificationId` the
service keeps when it retries), with the event's `resource`. The shapes are the REST API's
(`GitPullRequest`, `Comment`, `GitPush`, `WorkItem`, `WorkItemUpdate`) at resource version 1.0
(2.0 for a pull request's comment event), as the service-hook events page documents them:
https://learn.microsoft.com/azure/devops/service-hooks/events
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

from pydantic import Field

from resolver.contract.inbound import (
    Headers,
    MalformedError,
    Sender,
    VendorModel,
    WebhookEvent,
    check_storable,
    validated,
)

# The identity descriptors of service principals and of the service's own accounts.
_BOT_DESCRIPTORS: Final = ("aadsp.", "svc.", "s2s.")
_THREAD: Final = re.compile(r"/threads/([0-9]{1,9})(?:$|/|\?)")


class Notification(VendorModel):
    eventType: str
    notificationId: int
    subscriptionId: str


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key the `eventType`; delivery key `<subscriptionId>:<notificationId>`, which a retry of
    the same notification keeps (the event's own `id` changes with each subscription)."""
    check_storable(body)
    note = validated(Notification, WebhookEvent("", "", body=body))
    if not note.eventType or not note.subscriptionId:
        raise MalformedError("missing eventType or subscriptionId")
    return WebhookEvent(note.eventType, f"{note.subscriptionId}:{note.notificationId}", body=body)


class Identity(VendorModel):
    """An `IdentityRef`: `id` is the stable identity id, `uniqueName` the sign-in name."""

    id: str
    displayName: str = ""
    uniqueName: str | None = None
    descriptor: str | None = None

    def as_sender(self) -> Sender:
        """The login is the sign-in name's part before `@` (`alice` of `alice@contoso.com`):
        what a mention and the bot's own name are written as; the id is what is trusted."""
        login = (self.uniqueName or self.displayName).split("@", 1)[0] or None
        is_bot = (self.descriptor or "").startswith(_BOT_DESCRIPTORS)
        return Sender(external_id=self.id, login=login, is_bot=is_bot)


class Project(VendorModel):
    id: str
    name: str


class Repository(VendorModel):
    id: str
    name: str
    project: Project
    remoteUrl: str | None = None
    defaultBranch: str | None = None
    webUrl: str | None = None

    @property
    def full_name(self) -> str:
        """`Project/Repository`: a repository is named within its project."""
        return f"{self.project.name}/{self.name}"

    @property
    def default_branch(self) -> str | None:
        return self.defaultBranch.removeprefix("refs/heads/") if self.defaultBranch else None


class Label(VendorModel):
    name: str
    active: bool = True


class Commit(VendorModel):
    commitId: str


class PullRequest(VendorModel):
    pullRequestId: int
    title: str = ""
    description: str | None = None
    sourceRefName: str | None = None
    targetRefName: str | None = None
    createdBy: Identity | None = None
    repository: Repository
    isDraft: bool = False
    labels: list[Label] | None = None
    lastMergeSourceCommit: Commit | None = None

    @property
    def head(self) -> str | None:
        return self.sourceRefName.removeprefix("refs/heads/") if self.sourceRefName else None

    @property
    def base(self) -> str | None:
        return self.targetRefName.removeprefix("refs/heads/") if self.targetRefName else None


class Link(VendorModel):
    href: str


class Comment(VendorModel):
    id: int
    content: str | None = None
    author: Identity
    parentCommentId: int = 0
    publishedDate: datetime | None = None
    links: dict[str, Link] = Field(default_factory=dict, alias="_links")

    @property
    def thread_id(self) -> int | None:
        """A comment names its thread only in its links (`…/threads/{id}`)."""
        found = _THREAD.search(self.links["threads"].href) if "threads" in self.links else None
        return int(found.group(1)) if found else None


class PullCommentResource(VendorModel):
    comment: Comment
    pullRequest: PullRequest


class RefUpdate(VendorModel):
    name: str
    oldObjectId: str
    newObjectId: str


class PushResource(VendorModel):
    refUpdates: list[RefUpdate]
    repository: Repository
    pushedBy: Identity


class WorkItem(VendorModel):
    """A work item with its `fields` by reference name (`System.Title`, …)."""

    id: int
    rev: int | None = None
    fields: dict[str, Any] = Field(default_factory=dict)
    url: str | None = None


class WorkItemUpdate(VendorModel):
    """One revision of a work item: the changed `fields` as `{oldValue, newValue}`, who made
    it, and the work item as it is after it (`revision`)."""

    id: int
    workItemId: int
    revisedBy: Identity
    fields: dict[str, Any] = Field(default_factory=dict)
    revision: WorkItem


class BuildRepository(VendorModel):
    id: str
    name: str | None = None


class Definition(VendorModel):
    name: str = ""


class Build(VendorModel):
    """A completed build (Azure Pipelines): a pull request's validation build carries the
    pull request in `triggerInfo` (`pr.number`, `pr.sourceBranch`)."""

    id: int
    result: str | None = None
    sourceBranch: str = ""
    sourceVersion: str = ""
    definition: Definition = Definition()
    project: Project
    repository: BuildRepository
    requestedFor: Identity | None = None
    triggerInfo: dict[str, str] = Field(default_factory=dict)
    links: dict[str, Link] = Field(default_factory=dict, alias="_links")


class BuildEvent(VendorModel):
    resource: Build


class PullCommentEvent(VendorModel):
    resource: PullCommentResource


class PullEvent(VendorModel):
    resource: PullRequest


class PushEvent(VendorModel):
    resource: PushResource


class WorkItemCommentEvent(VendorModel):
    resource: WorkItem


class WorkItemUpdateEvent(VendorModel):
    resource: WorkItemUpdate
