"""GitLab payloads: the fields we read (self-managed versions differ; most are optional)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from resolver.contract.inbound import (
    Headers,
    MalformedError,
    Sender,
    VendorModel,
    WebhookEvent,
    content_key,
    decode_object,
)

# Project and group access tokens act through users named like `project_42_bot_<hex>`.
_TOKEN_BOT = re.compile(r"^(project|group)_\d+_bot(_|$)")


def parse_event(headers: Headers, body: bytes) -> WebhookEvent:
    """Key: the `X-Gitlab-Event` header (`Note Hook`). Delivery: `Idempotency-Key`, stable
    across retries, else `webhook-id`, else `X-Gitlab-Event-UUID`, else the body's hash."""
    name = headers.get("x-gitlab-event")
    if not name:
        raise MalformedError("missing X-Gitlab-Event")
    payload = decode_object(body)
    delivery = (
        headers.get("idempotency-key")
        or headers.get("webhook-id")
        or headers.get("x-gitlab-event-uuid")
        or content_key(name, hashlib.sha256(body).hexdigest())
    )
    return WebhookEvent(name, delivery, payload)


class User(VendorModel):
    id: int | None = None
    username: str
    name: str | None = None

    def as_sender(self) -> Sender:
        external_id = str(self.id) if self.id is not None else self.username
        is_bot = bool(_TOKEN_BOT.match(self.username))
        return Sender(external_id=external_id, login=self.username, is_bot=is_bot)


class Project(VendorModel):
    id: int
    path_with_namespace: str
    git_http_url: str | None = None
    default_branch: str | None = None
    web_url: str | None = None


class Label(VendorModel):
    title: str


class NoteAttributes(VendorModel):
    id: int
    note: str | None = None
    noteable_type: str
    action: str | None = None  # GitLab 16.11+: create | update
    system: bool | None = None
    type: str | None = None  # DiffNote, DiscussionNote or null
    discussion_id: str | None = None
    line_code: str | None = None
    commit_id: str | None = None
    position: dict[str, Any] | None = None
    url: str | None = None


class Noteable(VendorModel):
    """The issue or merge request a note is on."""

    id: int | None = None
    iid: int
    title: str = ""
    description: str | None = None
    source_branch: str | None = None
    target_branch: str | None = None
    url: str | None = None


class NoteEvent(VendorModel):
    user: User
    project: Project
    object_attributes: NoteAttributes
    issue: Noteable | None = None
    merge_request: Noteable | None = None


class LabelChange(VendorModel):
    previous: list[Label] | None = None
    current: list[Label] | None = None


class Changes(VendorModel):
    labels: LabelChange | None = None


class WorkItemEvent(VendorModel):
    """An `Issue Hook` or a `Merge Request Hook`."""

    user: User
    project: Project
    object_attributes: Noteable
    changes: Changes | None = None


class PipelineAttributes(VendorModel):
    id: int
    sha: str
    ref: str | None = None
    status: str | None = None
    url: str | None = None


class PipelineJob(VendorModel):
    """A job (`builds`) of a pipeline."""

    id: int
    name: str = ""
    stage: str | None = None
    status: str | None = None
    allow_failure: bool = False


class PipelineEvent(VendorModel):
    """A `Pipeline Hook`; `merge_request` is set for a merge request's pipeline."""

    user: User
    project: Project
    object_attributes: PipelineAttributes
    merge_request: Noteable | None = None
    builds: list[PipelineJob] = []


class PushCommit(VendorModel):
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


class PushEvent(VendorModel):
    """A `Push Hook` (`object_kind: push`): the pusher is flat (`user_id`, `user_username`),
    not a `user` object. https://docs.gitlab.com/user/project/integrations/webhook_events/#push-events"""

    ref: str
    after: str
    user_id: int | None = None
    user_username: str
    user_name: str | None = None
    project: Project
    commits: tuple[PushCommit, ...] | None = None
    total_commits_count: int | None = None

    @property
    def user(self) -> User:
        return User(id=self.user_id, username=self.user_username, name=self.user_name)
