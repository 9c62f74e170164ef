"""The Forgejo stand-in's records and the JSON it renders them as: the API's own shapes
(`User`, `Repository`, `Comment`, `PullRequest`, `Hook`, `Reaction`), with only the fields a
client may read filled, every key checked against the published description in the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

# Forgejo's default `[repository.pull-request] WORK_IN_PROGRESS_PREFIXES`.
WIP_PREFIXES: Final = ("WIP:", "[WIP]")
# Its default `[ui] REACTIONS`; any other reaction is refused (403).
REACTIONS: Final = frozenset({"+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"})
# What `AccessMode.String()` says, lowest first.
MODES: Final = ("none", "read", "write", "admin", "owner")
HOOK_TYPES: Final = frozenset({"forgejo", "gitea", "gogs", "slack", "discord", "matrix"})


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass
class Repo:
    """A repository: its people's access modes (login -> `read`, `write`, `admin`), its issue
    numbers (issues and pull requests share them, as on Forgejo)."""

    id: int
    full_name: str
    clone_url: str
    default_branch: str = "main"
    private: bool = False
    collaborators: dict[str, str] = field(default_factory=dict)
    issues: set[int] = field(default_factory=set)

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]


@dataclass
class Comment:
    id: int
    repo: str
    number: int
    body: str
    user_id: int
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)
    is_pull: bool = False


@dataclass
class Pull:
    number: int
    repo: str
    head: str
    base: str
    title: str
    body: str
    user_id: int
    state: str = "open"
    fork: str | None = None
    """The fork its head branch lives in; None for a branch of `repo` itself."""
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)

    @property
    def draft(self) -> bool:
        """Forgejo marks a pull request work in progress by its title's prefix."""
        return self.title.upper().startswith(tuple(p.upper() for p in WIP_PREFIXES))


@dataclass
class Hook:
    """A webhook of a repository or an organisation (`owner`: its full name or the org)."""

    id: int
    owner: str
    type: str
    config: dict[str, str]
    events: list[str]
    active: bool
    branch_filter: str = ""
    created_at: str = field(default_factory=now)

    @property
    def secret(self) -> str:
        return self.config.get("secret", "")


@dataclass(frozen=True)
class Reaction:
    """A reaction on a comment (`comment_id`) or on an issue's first post (`number`)."""

    repo: str
    content: str
    user_id: int
    comment_id: int | None = None
    number: int | None = None
    created_at: str = field(default_factory=now)


def error(message: str, origin: str) -> dict[str, Any]:
    """Forgejo's API error document (`APIError`)."""
    return {"message": message, "url": f"{origin}/api/swagger"}


def user_json(user_id: int, login: str, origin: str) -> dict[str, Any]:
    return {
        "id": user_id,
        "login": login,
        "login_name": "",
        "full_name": login.title(),
        "email": f"{login}@noreply.localhost",
        "avatar_url": f"{origin}/avatars/{user_id}",
        "html_url": f"{origin}/{login}",
        "is_admin": False,
        "restricted": False,
        "active": True,
        "prohibit_login": False,
        "visibility": "public",
        "created": "2025-01-01T00:00:00Z",
    }


def repo_json(repo: Repo, owner: dict[str, Any], origin: str) -> dict[str, Any]:
    name = repo.full_name.split("/", 1)[1]
    return {
        "id": repo.id,
        "owner": owner,
        "name": name,
        "full_name": repo.full_name,
        "private": repo.private,
        "fork": False,
        "empty": False,
        "html_url": f"{origin}/{repo.full_name}",
        "url": f"{origin}/api/v1/repos/{repo.full_name}",
        "clone_url": repo.clone_url,
        "default_branch": repo.default_branch,
        "has_issues": True,
        "has_pull_requests": True,
        "archived": False,
    }


def comment_json(comment: Comment, user: dict[str, Any], origin: str) -> dict[str, Any]:
    kind = "pulls" if comment.is_pull else "issues"
    page = f"{origin}/{comment.repo}/{kind}/{comment.number}"
    return {
        "id": comment.id,
        "html_url": f"{page}#issuecomment-{comment.id}",
        "pull_request_url": page if comment.is_pull else "",
        "issue_url": "" if comment.is_pull else page,
        "user": user,
        "original_author": "",
        "original_author_id": 0,
        "body": comment.body,
        "assets": [],
        "created_at": comment.created_at,
        "updated_at": comment.updated_at,
    }


def branch_json(ref: str, repo: Repo, fork: str | None = None) -> dict[str, Any]:
    """A pull request's end (`PRBranchInfo`); its repository, a `fork`'s for the head of a pull
    request from one."""
    full_name = fork or repo.full_name
    repo_id = repo.id if fork is None else repo.id + 100_000  # a fork is another repository
    owned = {
        "id": repo_id,
        "full_name": full_name,
        "name": full_name.split("/", 1)[1],
        "fork": fork is not None,
    }
    return {"label": ref, "ref": ref, "sha": "", "repo_id": repo_id, "repo": owned}


def pull_json(pull: Pull, repo: Repo, user: dict[str, Any], origin: str) -> dict[str, Any]:
    page = f"{origin}/{repo.full_name}/pulls/{pull.number}"
    return {
        "id": 1_000_000 + pull.number,
        "url": page,
        "number": pull.number,
        "user": user,
        "title": pull.title,
        "body": pull.body,
        "state": pull.state,
        "draft": pull.draft,
        "is_locked": False,
        "html_url": page,
        "diff_url": f"{page}.diff",
        "patch_url": f"{page}.patch",
        "mergeable": True,
        "merged": False,
        "base": branch_json(pull.base, repo),
        "head": branch_json(pull.head, repo, pull.fork),
        "created_at": pull.created_at,
        "updated_at": pull.updated_at,
    }


def hook_json(hook: Hook) -> dict[str, Any]:
    """Forgejo never sends a hook's secret back."""
    config = {k: v for k, v in hook.config.items() if k != "secret"}
    return {
        "id": hook.id,
        "type": hook.type,
        "branch_filter": hook.branch_filter,
        "config": config,
        "events": hook.events,
        "authorization_header": "",
        "active": hook.active,
        "created_at": hook.created_at,
        "updated_at": hook.created_at,
    }


def reaction_json(reaction: Reaction, user: dict[str, Any]) -> dict[str, Any]:
    return {"user": user, "content": reaction.content, "created_at": reaction.created_at}
