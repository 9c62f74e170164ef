"""The Bitbucket stand-in's REST handlers: each takes the API and an authenticated call and
answers as Bitbucket Cloud does (status, body, headers). Paths are below `/2.0`."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urlencode

from integrations.bitbucket.standin.state import (
    Comment,
    Hook,
    Pull,
    comment_json,
    hook_json,
    now,
    pull_json,
    repo_json,
)
from integrations.standin.server import Reply, Routed

if TYPE_CHECKING:
    from integrations.bitbucket.standin.api import BitbucketAPI

PULL: Final = "/repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}"
PAGE_LENGTH: Final = 10  # Bitbucket's default `pagelen`
HOOK_EVENTS: Final = frozenset(
    {
        "pullrequest:comment_created",
        "pullrequest:created",
        "pullrequest:changes_request_created",
        "pullrequest:updated",
        "repo:push",
        "repo:commit_status_updated",
    }
)
_NAME_QUERY: Final = re.compile(r'^repository\.full_name\s*=\s*"([^"]+)"$')
_UUID_QUERY: Final = re.compile(r'^user\.uuid\s*=\s*"(\{[^"]+\})"$')


class RefusedError(Exception):
    """A call Bitbucket refuses: its status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class Call:
    """A routed call and the account its token acts as (a uuid)."""

    routed: Routed
    user: str

    @property
    def params(self) -> dict[str, str]:
        return self.routed.params

    @property
    def body(self) -> dict[str, Any]:
        return self.routed.body if isinstance(self.routed.body, dict) else {}

    def query(self, name: str) -> str | None:
        values = self.routed.query.get(name)
        return values[-1] if values else None


Handler = Callable[["BitbucketAPI", Call], Reply]


def page(api: BitbucketAPI, call: Call, path: str, items: list[dict[str, Any]]) -> Reply:
    """One page of `items` (`page`, PAGE_LENGTH long) with a `next` link while more are left."""
    raw = call.query("page") or "1"
    number = int(raw) if raw.isdigit() and int(raw) > 0 else 1
    start = (number - 1) * PAGE_LENGTH
    body: dict[str, Any] = {
        "values": items[start : start + PAGE_LENGTH],
        "page": number,
        "pagelen": PAGE_LENGTH,
        "size": len(items),
    }
    if start + PAGE_LENGTH < len(items):
        kept = [(k, v) for k, values in call.routed.query.items() if k != "page" for v in values]
        extra = f"&{urlencode(kept)}" if kept else ""
        body["next"] = f"{api.api_url}{path}?page={number + 1}{extra}"
    return 200, body, {}


def get_user(api: BitbucketAPI, call: Call) -> Reply:
    return 200, api.user(call.user), {}


def get_repo(api: BitbucketAPI, call: Call) -> Reply:
    repo = api.repo_of(call)
    return 200, repo_json(repo, api.url, api.api_url), {}


def repo_permissions(api: BitbucketAPI, call: Call) -> Reply:
    """Each person's effective permission; only a repository admin may ask. `q` filters by
    `user.uuid="{…}"` (the one filter the stand-in knows)."""
    repo = api.repo_of(call)
    if api.permission(repo, call.user) != "admin":
        return api.refuse(403, "You must be an admin of the repository to see its permissions.")
    wanted = call.query("q")
    match = _UUID_QUERY.match(wanted or "") if wanted is not None else None
    if wanted is not None and match is None:
        return api.refuse(400, f"Invalid query: {wanted}")
    items = [
        {
            "type": "repository_permission",
            "permission": permission,
            "user": api.user(person),
            "repository": {"type": "repository", "full_name": repo.full_name, "uuid": repo.uuid},
        }
        for person, permission in sorted(repo.permissions.items())
        if match is None or person == match.group(1)
    ]
    return page(api, call, _path(call), items)


def own_permissions(api: BitbucketAPI, call: Call) -> Reply:
    """The caller's own effective permission on each repository it may read; `q` filters by
    `repository.full_name="…"` (the one filter the stand-in knows)."""
    wanted = call.query("q")
    match = _NAME_QUERY.match(wanted or "") if wanted is not None else None
    if wanted is not None and match is None:
        return api.refuse(400, f"Invalid query: {wanted}")
    items = [
        {
            "type": "repository_permission",
            "permission": api.permission(repo, call.user),
            "user": api.user(call.user),
            "repository": {"type": "repository", "full_name": repo.full_name, "uuid": repo.uuid},
        }
        for repo in api.repos.values()
        if api.can(repo, call.user, "read") and (match is None or repo.full_name == match.group(1))
    ]
    return page(api, call, _path(call), items)


def _path(call: Call) -> str:
    template = call.routed.route.split(" ", 1)[1]
    for name, value in call.params.items():
        template = template.replace("{" + name + "}", value)
    return template


def list_comments(api: BitbucketAPI, call: Call) -> Reply:
    pull = api.pull_of(call)
    found = [
        comment_json(c, api.user(c.user), api.url, api.api_url)
        for c in sorted(api.comments.values(), key=lambda c: c.id)
        if (c.repo, c.number) == (pull.repo, pull.id)
    ]
    return page(api, call, _path(call), found)


def create_comment(api: BitbucketAPI, call: Call) -> Reply:
    """400 without a text; an answer to a `parent` comment of the same pull request."""
    pull = api.pull_of(call)
    raw = str((call.body.get("content") or {}).get("raw") or "")
    if not raw:
        return api.refuse(400, "content: This field is required.")
    parent = (call.body.get("parent") or {}).get("id")
    known = api.comments.get(parent) if isinstance(parent, int) else None
    if parent is not None and (known is None or known.number != pull.id):
        return api.refuse(400, "parent: No such comment.")
    comment = Comment(api.new_id(), pull.repo, pull.id, raw, call.user, parent=parent)
    if known is not None:
        comment.path, comment.line, comment.side = known.path, known.line, known.side
    inline = call.body.get("inline")
    if inline is not None and known is None:
        anchor = _inline(inline)
        if anchor is None:
            return api.refuse(400, "inline: a path and one line (`to` or `from`) are required.")
        comment.path, comment.side, comment.line = anchor
    api.comments[comment.id] = comment
    return 201, comment_json(comment, api.user(call.user), api.url, api.api_url), {}


def _inline(inline: object) -> tuple[str, str, int] | None:
    """A line comment's anchor (path, `to` or `from`, line), or None when it names no path or
    not exactly one positive line."""
    if not isinstance(inline, dict) or not str(inline.get("path") or ""):
        return None
    sides = [s for s in ("to", "from") if inline.get(s) is not None]
    line = inline.get(sides[0]) if len(sides) == 1 else None
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        return None
    return str(inline["path"]), sides[0], line


def request_changes(api: BitbucketAPI, call: Call) -> Reply:
    """The caller, a reader of the repository, marks the pull request "changes requested"
    (again: no change); its participant record."""
    pull = api.pull_of(call)
    pull.changes_requested.add(call.user)
    participant = {
        "type": "participant",
        "user": api.user(call.user),
        "role": "PARTICIPANT",
        "approved": False,
        "state": "changes_requested",
        "participated_on": now(),
    }
    return 200, participant, {}


def edit_comment(api: BitbucketAPI, call: Call) -> Reply:
    """Only its author may edit a comment."""
    pull = api.pull_of(call)
    key = call.params["comment_id"]
    comment = api.comments.get(int(key)) if key.isdigit() else None
    if comment is None or (comment.repo, comment.number) != (pull.repo, pull.id):
        return api.refuse(404, "No such comment.")
    if comment.user != call.user:
        return api.refuse(403, "You can only edit your own comments.")
    comment.raw = str((call.body.get("content") or {}).get("raw") or comment.raw)
    comment.updated_on = now()
    return 200, comment_json(comment, api.user(comment.user), api.url, api.api_url), {}


def list_pulls(api: BitbucketAPI, call: Call) -> Reply:
    """Newest first; `state` (OPEN by default) filters."""
    repo = api.repo_of(call)
    state = call.query("state") or "OPEN"
    found = [p for p in reversed(api.pulls) if p.repo == repo.full_name and p.state == state]
    items = [pull_json(p, repo, api.user(p.author), api.url, api.api_url) for p in found]
    return page(api, call, _path(call), items)


def create_pull(api: BitbucketAPI, call: Call) -> Reply:
    """400 when a pull request from the branch into the same one is open already, or when
    the source is missing or the same as the destination."""
    repo, body = api.repo_of(call), call.body
    if not api.can(repo, call.user, "write"):
        return api.refuse(403, "You don't have write access to this repository.")
    head = str(((body.get("source") or {}).get("branch") or {}).get("name") or "")
    base = str(((body.get("destination") or {}).get("branch") or {}).get("name") or repo.main)
    if not head or head == base:
        return api.refuse(400, "source: You can't merge a branch into itself.")
    for pull in api.pulls:
        if (pull.repo, pull.head, pull.base, pull.state) == (repo.full_name, head, base, "OPEN"):
            return api.refuse(400, f"There is already an open pull request from {head} to {base}.")
    pull = Pull(
        api.next_pull_number(repo),
        repo.full_name,
        head,
        base,
        str(body.get("title") or ""),
        str(body.get("description") or ""),
        call.user,
        draft=bool(body.get("draft", False)),
    )
    api.pulls.append(pull)
    return 201, pull_json(pull, repo, api.user(call.user), api.url, api.api_url), {}


def get_pull(api: BitbucketAPI, call: Call) -> Reply:
    pull = api.pull_of(call)
    repo = api.repos[pull.repo]
    return 200, pull_json(pull, repo, api.user(pull.author), api.url, api.api_url), {}


def edit_pull(api: BitbucketAPI, call: Call) -> Reply:
    """400 without a title; every field left out is dropped (the draft flag, the description)."""
    if not str(call.body.get("title") or ""):
        return api.refuse(400, "title: This field is required.")
    pull = api.pull_of(call)
    repo = api.repos[pull.repo]
    if not api.can(repo, call.user, "write"):
        return api.refuse(403, "You don't have write access to this repository.")
    # A PUT replaces the pull request: what it leaves out is dropped.
    pull.title = str(call.body.get("title") or "")
    pull.description = str(call.body.get("description") or "")
    pull.draft = bool(call.body.get("draft", False))
    pull.updated_on = now()
    return 200, pull_json(pull, repo, api.user(pull.author), api.url, api.api_url), {}


def _hook_owner(api: BitbucketAPI, call: Call) -> tuple[str, str]:
    """The hooks' owner and its subject type, once the caller may manage them: a repository's
    admins, or a workspace's admins (RefusedError otherwise)."""
    if "repo_slug" in call.params:
        repo = api.repo_of(call)
        if api.permission(repo, call.user) != "admin":
            raise RefusedError(
                403, "You must be an admin of the repository to manage its webhooks."
            )
        return repo.full_name, "repository"
    workspace = call.params["workspace"]
    if workspace not in api.workspaces:
        raise RefusedError(404, f"No workspace {workspace}.")
    if call.user not in api.workspaces[workspace]:
        raise RefusedError(403, "You must be an admin of the workspace to manage its webhooks.")
    return workspace, "workspace"


def list_hooks(api: BitbucketAPI, call: Call) -> Reply:
    owner = _hook_owner(api, call)
    items = [hook_json(h) for h in api.hooks.values() if h.owner == owner[0]]
    return page(api, call, _path(call), items)


def create_hook(api: BitbucketAPI, call: Call) -> Reply:
    """400 for a missing URL or an unknown event."""
    owner = _hook_owner(api, call)
    body = call.body
    events = [str(e) for e in body.get("events") or []]
    if not body.get("url") or not events or not set(events) <= HOOK_EVENTS:
        return api.refuse(400, "url and known events are required.")
    hook = Hook(
        "{" + str(uuid.uuid4()) + "}",
        owner[0],
        owner[1],
        str(body["url"]),
        events,
        bool(body.get("active", True)),
        str(body.get("secret") or ""),
        str(body.get("description") or ""),
    )
    api.hooks[hook.uuid] = hook
    return 201, hook_json(hook), {}


def edit_hook(api: BitbucketAPI, call: Call) -> Reply:
    owner = _hook_owner(api, call)
    hook = api.hooks.get(unquote(call.params["uid"]))
    if hook is None or hook.owner != owner[0]:
        return api.refuse(404, "No such webhook.")
    body = call.body
    for name in ("url", "description", "secret"):
        if name in body:
            setattr(hook, name, str(body[name]))
    if isinstance(body.get("events"), list):
        hook.events = [str(e) for e in body["events"]]
    if "active" in body:
        hook.active = bool(body["active"])
    return 200, hook_json(hook), {}


ROUTES: Final[dict[str, Handler]] = {
    "GET /user": get_user,
    "GET /user/permissions/repositories": own_permissions,
    "GET /repositories/{workspace}/{repo_slug}": get_repo,
    "GET /workspaces/{workspace}/permissions/repositories/{repo_slug}": repo_permissions,
    "GET /repositories/{workspace}/{repo_slug}/pullrequests": list_pulls,
    "POST /repositories/{workspace}/{repo_slug}/pullrequests": create_pull,
    f"GET {PULL}": get_pull,
    f"PUT {PULL}": edit_pull,
    f"GET {PULL}/comments": list_comments,
    f"POST {PULL}/comments": create_comment,
    f"PUT {PULL}/comments/{{comment_id}}": edit_comment,
    f"POST {PULL}/request-changes": request_changes,
    "GET /repositories/{workspace}/{repo_slug}/hooks": list_hooks,
    "POST /repositories/{workspace}/{repo_slug}/hooks": create_hook,
    "PUT /repositories/{workspace}/{repo_slug}/hooks/{uid}": edit_hook,
    "GET /workspaces/{workspace}/hooks": list_hooks,
    "POST /workspaces/{workspace}/hooks": create_hook,
    "PUT /workspaces/{workspace}/hooks/{uid}": edit_hook,
}
