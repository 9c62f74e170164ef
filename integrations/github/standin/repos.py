"""The GitHub stand-in's App, user and repository routes, in GitHub's shapes: installation
tokens, the authenticated user, the repository (with a user's `permissions` on it), a user's
permission on it, and its pull requests.
https://docs.github.com/rest/apps/apps https://docs.github.com/rest/users/users
https://docs.github.com/rest/repos/repos https://docs.github.com/rest/pulls/pulls
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from integrations.github.standin.state import (
    Answer,
    Pull,
    Repo,
    Request,
    error_body,
    missing,
)
from integrations.standin.git_http import branch_head

if TYPE_CHECKING:
    from integrations.github.standin.api import GitHubAPI

# role_name -> the legacy `permission` GitHub reports beside it.
LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
}
# The `permissions` a repository shows a user's token, weakest first: a role grants its own
# and every one before it (read: pull; write: pull, triage, push; admin: all five).
PERMISSIONS = ("pull", "triage", "push", "maintain", "admin")
ROLE_RANK = {"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}


def get_authenticated_user(api: GitHubAPI, request: Request) -> Answer:
    """`GET /user`: whom a user token acts as. GitHub refuses it to an installation token."""
    if request.login.endswith("[bot]"):
        return 403, error_body(403, "Resource not accessible by integration")
    return 200, {**api.user_json(request.login), "name": request.login, "site_admin": False}


def create_access_token(api: GitHubAPI, request: Request) -> Answer:
    """GitHub's documented body: `repositories` (names) narrows the token to those repositories,
    `permissions` to those permissions; without them it has the whole installation's."""
    installation_id = int(request.params["installation_id"])
    if installation_id not in api.installations:
        return 404, error_body(404, "Not Found")
    body = request.body if isinstance(request.body, dict) else {}
    api.token_requests.append(body)
    names = body.get("repositories")
    expires = datetime.now(UTC) + api.token_lifetime
    answer: dict[str, Any] = {
        "token": api.mint(frozenset(names) if names else None),
        "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "permissions": body.get("permissions")
        or {"contents": "write", "issues": "write", "pull_requests": "write"},
        "repository_selection": "selected" if names else "all",
    }
    if names:
        answer["repositories"] = [
            {"name": repo.full_name.split("/")[1], "full_name": repo.full_name}
            for repo in api.repos.values()
            if repo.full_name.split("/")[1] in names
        ]
    return 201, answer


def get_repo(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    owner, name = repo.full_name.split("/")
    html = f"{api.web_url}/{repo.full_name}"
    answer = {
        "id": repo.id,
        "node_id": f"R_{repo.id}",
        "name": name,
        "full_name": repo.full_name,
        "private": repo.private,
        "owner": api.user_json(owner),
        "html_url": html,
        "url": f"{api.base_url}/repos/{repo.full_name}",
        "clone_url": repo.clone_url,
        "git_url": f"git://example.invalid/{repo.full_name}.git",
        "ssh_url": f"git@example.invalid:{repo.full_name}.git",
        "default_branch": repo.default_branch,
        "visibility": "private" if repo.private else "public",
        "archived": False,
        "disabled": False,
    }
    if not request.login.endswith("[bot]"):  # GitHub shows a person what they may do
        answer["permissions"] = _permissions(repo, request.login)
    return 200, answer


def _permissions(repo: Repo, login: str) -> dict[str, bool]:
    """What `login` may do: a collaborator by role, anyone else pull on a public repository."""
    role = repo.collaborators.get(login)
    rank = ROLE_RANK.get(role, 0) if role else int(not repo.private)
    return {name: rank > i for i, name in enumerate(PERMISSIONS)}


def get_permission(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    login = request.params["username"]
    role = repo.collaborators.get(login, "none" if repo.private else "read")
    permission = LEGACY_PERMISSION.get(role, "none")
    return 200, {"permission": permission, "role_name": role, "user": api.user_json(login)}


def _pull_json(api: GitHubAPI, pull: Pull) -> dict[str, Any]:
    owner = pull.repo.split("/")[0]
    return {
        "id": 50_000 + pull.number,
        "number": pull.number,
        "state": pull.state,
        "draft": pull.draft,
        "title": pull.title,
        "body": pull.body,
        "html_url": f"{api.web_url}/{pull.repo}/pull/{pull.number}",
        "url": f"{api.base_url}/repos/{pull.repo}/pulls/{pull.number}",
        "head": {
            "label": f"{(pull.head_repo or pull.repo).split('/')[0]}:{pull.head}",
            "ref": pull.head,
            "repo": {"full_name": pull.head_repo or pull.repo},
        },
        "base": {
            "label": f"{owner}:{pull.base}",
            "ref": pull.base,
            "repo": {"full_name": pull.repo},
        },
        "user": api.user_json(pull.author),
    }


def get_pull(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    number = int(request.params["pull_number"])
    found = [
        p for p in api.pulls if repo is not None and (p.repo, p.number) == (repo.full_name, number)
    ]
    if not found:
        return 404, error_body(404, "Not Found")
    return 200, _pull_json(api, found[0])


def update_pull(api: GitHubAPI, request: Request) -> Answer:
    """Edit a pull request's title or description (the only fields the service changes)."""
    repo = api.repo(request)
    number = int(request.params["pull_number"])
    found = [
        p for p in api.pulls if repo is not None and (p.repo, p.number) == (repo.full_name, number)
    ]
    if not found:
        return 404, error_body(404, "Not Found")
    body = request.body or {}
    for name in ("title", "body"):
        if name in body and not isinstance(body[name], str):
            return _invalid(field_name=name)
    with api.lock:
        found[0].title = body.get("title", found[0].title)
        found[0].body = body.get("body", found[0].body)
    return 200, _pull_json(api, found[0])


def list_pulls(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    state = request.query.get("state", ["open"])[0]
    head = request.query.get("head", [None])[0]
    base = request.query.get("base", [None])[0]
    per_page = int(request.query.get("per_page", ["30"])[0])
    owner = repo.full_name.split("/")[0]
    found = [
        _pull_json(api, p)
        for p in api.pulls
        if p.repo == repo.full_name
        and state in (p.state, "all")
        and (head is None or head == f"{owner}:{p.head}")
        and (base is None or base == p.base)
    ]
    if request.query.get("direction", ["desc"])[0] == "desc":
        found.reverse()  # sort=created: newest first
    return 200, found[:per_page]


def _branch_exists(repo: Repo, branch: str) -> bool:
    return repo.bare is None or branch_head(repo.bare, branch) is not None


def _invalid(message: str | None = None, field_name: str | None = None) -> Answer:
    error = {"resource": "PullRequest", "code": "custom" if message else "invalid"}
    error |= {"message": message} if message else {"field": field_name or ""}
    return 422, error_body(422, "Validation Failed", [error])


def create_pull(api: GitHubAPI, request: Request) -> Answer:
    repo = api.repo(request)
    if repo is None:
        return 404, error_body(404, "Not Found")
    body = request.body or {}
    for name in ("title", "head", "base"):
        if not isinstance(body.get(name), str):
            return missing(name, "PullRequest")
    owner = repo.full_name.split("/")[0]
    head = body["head"].removeprefix(f"{owner}:")
    if not _branch_exists(repo, head):
        return _invalid(field_name="head")
    for pull in api.pulls:
        if (pull.repo, pull.head, pull.base, pull.state) == (
            repo.full_name,
            head,
            body["base"],
            "open",
        ):
            return _invalid(f"A pull request already exists for {owner}:{head}.")
    if body.get("draft") and not repo.drafts_supported:
        return _invalid("Draft pull requests are not supported in this repository.")
    number = len(api.pulls) + 1
    pull = Pull(
        number,
        repo.full_name,
        head,
        body["base"],
        body["title"],
        body.get("body") or "",
        bool(body.get("draft")),
    )
    api.pulls.append(pull)
    return 201, _pull_json(api, pull)
