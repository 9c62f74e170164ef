"""The Bitbucket stand-in's records and the JSON it renders them as: the REST API's own schemas
(`user`, `repository`, `pullrequest`, `pullrequest_comment`, `webhook_subscription`,
`repository_permission`, `error`), with only the fields a client may read filled, every key
checked against the published description in the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

PERMISSIONS: Final = ("none", "read", "write", "admin")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Repo:
    """A repository: its people's effective permissions (uuid -> `read`, `write`, `admin`)."""

    uuid: str
    full_name: str
    clone_url: str
    main: str = "main"
    private: bool = True
    permissions: dict[str, str] = field(default_factory=dict)
    parent: str | None = None
    """The repository it is a fork of (its full name)."""

    @property
    def workspace(self) -> str:
        return self.full_name.split("/", 1)[0]


@dataclass
class Pull:
    id: int
    repo: str
    head: str
    base: str
    title: str
    description: str
    author: str  # uuid
    draft: bool = False
    state: str = "OPEN"
    changes_requested: set[str] = field(default_factory=set)  # by these uuids
    created_on: str = field(default_factory=now)
    updated_on: str = field(default_factory=now)
    fork: Repo | None = None
    """The fork its source branch lives in; None for a branch of `repo` itself."""


@dataclass
class Comment:
    id: int
    repo: str
    number: int
    raw: str
    user: str  # uuid
    parent: int | None = None
    path: str | None = None
    line: int | None = None
    side: str = "to"  # `to`: `line` is of the head; `from`: of the base
    created_on: str = field(default_factory=now)
    updated_on: str = field(default_factory=now)


@dataclass
class Hook:
    """A webhook of a repository or a workspace (`owner`: its full name or the workspace)."""

    uuid: str
    owner: str
    subject_type: str
    url: str
    events: list[str]
    active: bool
    secret: str = ""
    description: str = ""
    created_at: str = field(default_factory=now)


def error(message: str) -> dict[str, Any]:
    """Bitbucket's error document (`error`)."""
    return {"type": "error", "error": {"message": message}}


def link(href: str) -> dict[str, str]:
    return {"href": href}


def user_json(uuid: str, nickname: str, web: str) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "nickname": nickname,
        "display_name": nickname.title(),
        "account_id": f"557058:{uuid.strip('{}')}",
        "links": {"html": link(f"{web}/{uuid}/"), "avatar": link(f"{web}/avatar/{nickname}")},
    }


def repo_json(repo: Repo, web: str, api: str) -> dict[str, Any]:
    name = repo.full_name.split("/", 1)[1]
    parent = {"parent": {"type": "repository", "full_name": repo.parent}} if repo.parent else {}
    return parent | {
        "type": "repository",
        "uuid": repo.uuid,
        "full_name": repo.full_name,
        "name": name,
        "is_private": repo.private,
        "scm": "git",
        "mainbranch": {"type": "branch", "name": repo.main},
        "links": {
            "self": link(f"{api}/repositories/{repo.full_name}"),
            "html": link(f"{web}/{repo.full_name}"),
            "clone": [{"name": "https", "href": repo.clone_url}],
        },
    }


def _endpoint(branch: str, repo: Repo) -> dict[str, Any]:
    return {
        "branch": {"name": branch},
        "commit": {"hash": "0" * 12},
        "repository": {"type": "repository", "full_name": repo.full_name, "uuid": repo.uuid},
    }


def pull_json(pull: Pull, repo: Repo, author: dict[str, Any], web: str, api: str) -> dict[str, Any]:
    self_href = f"{api}/repositories/{repo.full_name}/pullrequests/{pull.id}"
    return {
        "type": "pullrequest",
        "id": pull.id,
        "title": pull.title,
        "description": pull.description,
        "state": pull.state,
        "draft": pull.draft,
        "author": author,
        "source": _endpoint(pull.head, pull.fork or repo),
        "destination": _endpoint(pull.base, repo),
        "close_source_branch": False,
        "created_on": pull.created_on,
        "updated_on": pull.updated_on,
        "links": {
            "self": link(self_href),
            "html": link(f"{web}/{repo.full_name}/pull-requests/{pull.id}"),
            "comments": link(f"{self_href}/comments"),
        },
    }


def comment_json(comment: Comment, user: dict[str, Any], web: str, api: str) -> dict[str, Any]:
    base = f"{comment.repo}/pullrequests/{comment.number}/comments/{comment.id}"
    found: dict[str, Any] = {
        "type": "pullrequest_comment",
        "id": comment.id,
        "content": {"raw": comment.raw, "markup": "markdown", "html": ""},
        "user": user,
        "deleted": False,
        "created_on": comment.created_on,
        "updated_on": comment.updated_on,
        "links": {
            "self": link(f"{api}/repositories/{base}"),
            "html": link(
                f"{web}/{comment.repo}/pull-requests/{comment.number}#comment-{comment.id}"
            ),
        },
    }
    if comment.parent is not None:
        found["parent"] = {"type": "pullrequest_comment", "id": comment.parent}
    if comment.path is not None:
        found["inline"] = {"path": comment.path, comment.side: comment.line}
    return found


def hook_json(hook: Hook) -> dict[str, Any]:
    """Bitbucket never sends a hook's secret back, only whether one is set."""
    return {
        "type": "webhook_subscription",
        "uuid": hook.uuid,
        "url": hook.url,
        "description": hook.description,
        "subject_type": hook.subject_type,
        "active": hook.active,
        "events": hook.events,
        "secret_set": bool(hook.secret),
        "created_at": hook.created_at,
    }
