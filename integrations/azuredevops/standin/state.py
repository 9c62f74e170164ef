"""The Azure DevOps stand-in's records and the JSON it renders them as: the REST API's own
shapes (`IdentityRef`, `GitRepository`, `GitPullRequest`, `GitPullRequestCommentThread`,
`Comment`, `AccessControlList`, `Identity`, `Subscription`), with only the fields a client may
read filled, every key checked against Microsoft's published descriptions in the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

GIT_NAMESPACE: Final = "2e9eb7ed-3c0a-47d4-87c1-0ffdd275fd87"
CONTRIBUTE: Final = 4
READ: Final = 2


class NotFoundError(Exception):
    """A path's project, repository, pull request or thread does not exist: 404."""


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class Person:
    id: str
    unique_name: str
    display_name: str

    @property
    def descriptor(self) -> str:
        return f"Microsoft.IdentityModel.Claims.ClaimsIdentity;contoso\\{self.unique_name}"


@dataclass
class Repo:
    """A repository in a project: who may contribute (identity ids) and read."""

    id: str
    project: str
    project_id: str
    name: str
    remote_url: str
    default_branch: str = "main"
    contributors: set[str] = field(default_factory=set)
    readers: set[str] = field(default_factory=set)
    is_fork: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.project}/{self.name}"


@dataclass
class Comment:
    id: int
    parent: int
    author: str
    content: str
    likes: set[str] = field(default_factory=set)
    published: str = field(default_factory=now)
    updated: str = field(default_factory=now)


@dataclass
class Thread:
    id: int
    comments: list[Comment] = field(default_factory=list)
    status: str = "active"
    published: str = field(default_factory=now)
    context: dict[str, Any] | None = None  # its `threadContext`: a file and a line of the diff


@dataclass
class Pull:
    id: int
    repo: Repo
    source: str
    target: str
    title: str
    description: str
    created_by: str
    is_draft: bool = False
    status: str = "active"
    threads: list[Thread] = field(default_factory=list)
    reviewers: dict[str, int] = field(default_factory=dict)  # identity id -> vote
    created: str = field(default_factory=now)
    fork: Repo | None = None
    """The fork its source branch lives in; None for a branch of `repo` itself."""
    merge: tuple[str, str, str] | None = None
    """Its last merge (the merge commit, the source's and the target's commits), once made."""


@dataclass
class WorkItemComment:
    id: int
    work_item: int
    project: str
    text: str
    author: str
    created: str = field(default_factory=now)
    modified: str = field(default_factory=now)


@dataclass
class Subscription:
    id: str
    event_type: str
    consumer_inputs: dict[str, str]
    publisher_inputs: dict[str, str]
    created: str = field(default_factory=now)


def identity_ref(person: Person, origin: str) -> dict[str, Any]:
    return {
        "id": person.id,
        "displayName": person.display_name,
        "uniqueName": person.unique_name,
        "url": f"{origin}/_apis/Identities/{person.id}",
        "imageUrl": f"{origin}/_api/_common/identityImage?id={person.id}",
        "descriptor": f"aad.{person.id}",
    }


def project_ref(repo: Repo, base: str) -> dict[str, Any]:
    return {
        "id": repo.project_id,
        "name": repo.project,
        "url": f"{base}/_apis/projects/{repo.project_id}",
        "state": "wellFormed",
        "visibility": "private",
    }


def repo_json(repo: Repo, base: str) -> dict[str, Any]:
    return {
        "id": repo.id,
        "name": repo.name,
        "url": f"{base}/{repo.project_id}/_apis/git/repositories/{repo.id}",
        "project": project_ref(repo, base),
        "defaultBranch": f"refs/heads/{repo.default_branch}",
        "remoteUrl": repo.remote_url,
        "webUrl": f"{base}/{repo.project}/_git/{repo.name}",
        "size": 0,
        "isDisabled": False,
        "isFork": repo.is_fork,
    }


def comment_json(comment: Comment, author: dict[str, Any], base: str) -> dict[str, Any]:
    return {
        "id": comment.id,
        "parentCommentId": comment.parent,
        "author": author,
        "content": comment.content,
        "publishedDate": comment.published,
        "lastUpdatedDate": comment.updated,
        "lastContentUpdatedDate": comment.updated,
        "commentType": "text",
        "isDeleted": False,
        "usersLiked": [],
    }


@dataclass
class BuildRun:
    """A completed build of a project: its plan (timeline) id, and its failed tasks as (name,
    error message, log text)."""

    id: int
    project: str
    plan: str
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    result: str = "failed"
