"""The Forgejo stand-in's REST handlers: each takes the API and an authenticated call and
answers as Forgejo does (status, body, headers). Paths are below `/api/v1`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from integrations.forgejo.standin.reviews import REVIEW_ROUTES
from integrations.forgejo.standin.state import (
    HOOK_TYPES,
    MODES,
    REACTIONS,
    Comment,
    Hook,
    Pull,
    Reaction,
    comment_json,
    hook_json,
    now,
    pull_json,
    reaction_json,
    repo_json,
)
from integrations.standin.server import Reply, Routed

if TYPE_CHECKING:
    from integrations.forgejo.standin.api import ForgejoAPI

DEFAULT_LIMIT: Final = 30
MAX_LIMIT: Final = 50  # Forgejo's `[api] MAX_RESPONSE_ITEMS`
ONLY_ADMINS: Final = (
    "Only admins can query all permissions, repo admins can query all repo permissions, "
    "collaborators can query only their own"
)


@dataclass(frozen=True)
class Call:
    """A routed call and the user its token acts as."""

    routed: Routed
    user_id: int

    @property
    def params(self) -> dict[str, str]:
        return self.routed.params

    @property
    def body(self) -> dict[str, Any]:
        return self.routed.body if isinstance(self.routed.body, dict) else {}

    def int_query(self, name: str, default: int) -> int:
        values = self.routed.query.get(name)
        return int(values[-1]) if values and values[-1].isdigit() else default


Handler = Callable[["ForgejoAPI", Call], Reply]


def get_user(api: ForgejoAPI, call: Call) -> Reply:
    return 200, api.user(call.user_id), {}


def get_repo(api: ForgejoAPI, call: Call) -> Reply:
    repo = api.repo_of(call)
    return 200, repo_json(repo, api.user(api.user_id(repo.owner)), api.origin), {}


def get_permission(api: ForgejoAPI, call: Call) -> Reply:
    """Only a site admin, a repository admin, or the person themselves may ask."""
    repo, login = api.repo_of(call), call.params["collaborator"]
    if login not in api.users.values():
        return api.refuse(404, "user does not exist")
    caller = api.users[call.user_id]
    if not (api.is_admin(call.user_id) or caller == login or api.can(repo, caller, "admin")):
        return api.refuse(403, ONLY_ADMINS)
    mode = MODES[api.mode(repo, login)]
    user = api.user(api.user_id(login))
    return 200, {"permission": mode, "role_name": mode, "user": user}, {}


def create_comment(api: ForgejoAPI, call: Call) -> Reply:
    repo, number = api.repo_of(call), int(call.params["index"])
    if number not in repo.issues:
        return api.refuse(404, "issue does not exist")
    if not str(call.body.get("body") or ""):
        return api.refuse(422, "[Body]: Required")
    is_pull = any(p.repo == repo.full_name and p.number == number for p in api.pulls)
    comment = Comment(api.new_id(), repo.full_name, number, call.body["body"], call.user_id)
    comment.is_pull = is_pull
    api.comments[comment.id] = comment
    return 201, comment_json(comment, api.user(call.user_id), api.origin), {}


def list_comments(api: ForgejoAPI, call: Call) -> Reply:
    """Every comment of the issue, oldest first; `since` keeps those updated at or after it."""
    repo, number = api.repo_of(call), int(call.params["index"])
    if number not in repo.issues:
        return api.refuse(404, "issue does not exist")
    since = (call.routed.query.get("since") or [""])[-1]
    found = [
        comment_json(c, api.user(c.user_id), api.origin)
        for c in sorted(api.comments.values(), key=lambda c: c.id)
        if c.repo == repo.full_name and c.number == number and c.updated_at >= since
    ]
    return 200, found, {}


def edit_comment(api: ForgejoAPI, call: Call) -> Reply:
    """Only its author (or an admin) may edit a comment."""
    comment = api.comment_of(call)
    if comment.user_id != call.user_id and not api.is_admin(call.user_id):
        return api.refuse(403, "user should be the poster")
    comment.body, comment.updated_at = str(call.body.get("body") or ""), now()
    return 200, comment_json(comment, api.user(comment.user_id), api.origin), {}


def react_to_comment(api: ForgejoAPI, call: Call) -> Reply:
    comment = api.comment_of(call)
    return _react(api, call, Reaction(comment.repo, _content(call), call.user_id, comment.id))


def react_to_issue(api: ForgejoAPI, call: Call) -> Reply:
    repo, number = api.repo_of(call), int(call.params["index"])
    if number not in repo.issues:
        return api.refuse(404, "issue does not exist")
    reaction = Reaction(repo.full_name, _content(call), call.user_id, number=number)
    return _react(api, call, reaction)


def _content(call: Call) -> str:
    return str(call.body.get("content") or "")


def _react(api: ForgejoAPI, call: Call, reaction: Reaction) -> Reply:
    """201 for a new reaction, 200 with the one already there, 403 for one not allowed."""
    if reaction.content not in REACTIONS:
        return api.refuse(403, f"'{reaction.content}' is not an allowed reaction")
    same = (reaction.repo, reaction.content, reaction.user_id, reaction.comment_id, reaction.number)
    for known in api.reactions:
        if (known.repo, known.content, known.user_id, known.comment_id, known.number) == same:
            return 200, reaction_json(known, api.user(call.user_id)), {}
    api.reactions.append(reaction)
    return 201, reaction_json(reaction, api.user(call.user_id)), {}


def list_pulls(api: ForgejoAPI, call: Call) -> Reply:
    """Newest first, a page at a time (`limit` at most MAX_LIMIT), with Forgejo's paging headers."""
    repo = api.repo_of(call)
    state = (call.routed.query.get("state") or ["open"])[-1]
    found = [
        p for p in reversed(api.pulls) if p.repo == repo.full_name and state in ("all", p.state)
    ]
    limit = min(max(call.int_query("limit", DEFAULT_LIMIT), 1), MAX_LIMIT)
    page = max(call.int_query("page", 1), 1)
    items = found[(page - 1) * limit : page * limit]
    body = [pull_json(p, repo, api.user(p.user_id), api.origin) for p in items]
    return 200, body, {"X-Total-Count": str(len(found))}


def create_pull(api: ForgejoAPI, call: Call) -> Reply:
    """409 when a pull request from `head` into `base` is open already; 422 for head = base."""
    repo, body = api.repo_of(call), call.body
    head, base = str(body.get("head") or ""), str(body.get("base") or repo.default_branch)
    if not api.can(repo, api.users[call.user_id], "write"):
        return api.refuse(403, "user does not have permission to create a pull request")
    if not head or head == base:
        return api.refuse(
            422, "Invalid PullRequest: There are no changes between the head and the base"
        )
    for pull in api.pulls:
        if (pull.repo, pull.head, pull.base, pull.state) == (repo.full_name, head, base, "open"):
            message = (
                f"pull request already exists for these targets [id: {pull.number}, "
                f"head_branch: {head}, base_branch: {base}]"
            )
            return api.refuse(409, message)
    number = 1 + max(repo.issues, default=0)
    repo.issues.add(number)
    title = str(body.get("title") or "")
    pull = Pull(
        number, repo.full_name, head, base, title, str(body.get("body") or ""), call.user_id
    )
    api.pulls.append(pull)
    return 201, pull_json(pull, repo, api.user(call.user_id), api.origin), {}


def get_pull(api: ForgejoAPI, call: Call) -> Reply:
    repo, pull = api.repo_of(call), api.pull_of(call)
    return 200, pull_json(pull, repo, api.user(pull.user_id), api.origin), {}


def edit_pull(api: ForgejoAPI, call: Call) -> Reply:
    """Forgejo answers an edit with 201."""
    repo, pull = api.repo_of(call), api.pull_of(call)
    for name in ("title", "body", "state"):
        if name in call.body:
            setattr(pull, name, str(call.body[name]))
    pull.updated_at = now()
    return 201, pull_json(pull, repo, api.user(pull.user_id), api.origin), {}


def create_repo_hook(api: ForgejoAPI, call: Call) -> Reply:
    repo = api.repo_of(call)
    if not api.can(repo, api.users[call.user_id], "admin"):
        return api.refuse(403, "Must be an organization owner or repository admin")
    return _create_hook(api, call, repo.full_name)


def list_repo_hooks(api: ForgejoAPI, call: Call) -> Reply:
    repo = api.repo_of(call)
    if not api.can(repo, api.users[call.user_id], "admin"):
        return api.refuse(403, "Must be an organization owner or repository admin")
    return 200, [hook_json(h) for h in api.hooks.values() if h.owner == repo.full_name], {}


def create_org_hook(api: ForgejoAPI, call: Call) -> Reply:
    org = call.params["org"]
    if org not in api.orgs:
        return api.refuse(404, "org does not exist")
    if api.users[call.user_id] not in api.orgs[org]:
        return api.refuse(403, "Must be an organization owner")
    return _create_hook(api, call, org)


def list_org_hooks(api: ForgejoAPI, call: Call) -> Reply:
    org = call.params["org"]
    if org not in api.orgs:
        return api.refuse(404, "org does not exist")
    if api.users[call.user_id] not in api.orgs[org]:
        return api.refuse(403, "Must be an organization owner")
    return 200, [hook_json(h) for h in api.hooks.values() if h.owner == org], {}


def _create_hook(api: ForgejoAPI, call: Call, owner: str) -> Reply:
    """422 for an unknown type or a config without `url` or `content_type`."""
    body = call.body
    given = body.get("config")
    config: dict[str, Any] = given if isinstance(given, dict) else {}
    kind = str(body.get("type") or "")
    if kind not in HOOK_TYPES:
        return api.refuse(422, "Invalid hook type")
    for required in ("url", "content_type"):
        if not config.get(required):
            return api.refuse(422, f"Missing config option: {required}")
    events = [str(e) for e in body.get("events") or ["push"]]
    hook = Hook(
        api.new_id(),
        owner,
        kind,
        {k: str(v) for k, v in config.items()},
        events,
        bool(body.get("active", False)),
        str(body.get("branch_filter") or "*"),
    )
    api.hooks[hook.id] = hook
    return 201, hook_json(hook), {}


def edit_repo_hook(api: ForgejoAPI, call: Call) -> Reply:
    repo = api.repo_of(call)
    if not api.can(repo, api.users[call.user_id], "admin"):
        return api.refuse(403, "Must be an organization owner or repository admin")
    return _edit_hook(api, call, repo.full_name)


def edit_org_hook(api: ForgejoAPI, call: Call) -> Reply:
    org = call.params["org"]
    if org not in api.orgs:
        return api.refuse(404, "org does not exist")
    if api.users[call.user_id] not in api.orgs[org]:
        return api.refuse(403, "Must be an organization owner")
    return _edit_hook(api, call, org)


def _edit_hook(api: ForgejoAPI, call: Call, owner: str) -> Reply:
    """The given config keys replace the hook's (a new secret among them), as do its events
    and `active`; Forgejo answers the edited hook with 200."""
    hook = api.hooks.get(int(call.params["id"])) if call.params["id"].isdigit() else None
    if hook is None or hook.owner != owner:
        return api.refuse(404, "hook does not exist")
    body = call.body
    given = body.get("config")
    if isinstance(given, dict):
        hook.config |= {k: str(v) for k, v in given.items()}
    if isinstance(body.get("events"), list):
        hook.events = [str(e) for e in body["events"]]
    if "active" in body:
        hook.active = bool(body["active"])
    return 200, hook_json(hook), {}


ROUTES: Final[dict[str, Handler]] = {
    "GET /user": get_user,
    "GET /repos/{owner}/{repo}": get_repo,
    "GET /repos/{owner}/{repo}/collaborators/{collaborator}/permission": get_permission,
    "GET /repos/{owner}/{repo}/issues/{index}/comments": list_comments,
    "POST /repos/{owner}/{repo}/issues/{index}/comments": create_comment,
    "PATCH /repos/{owner}/{repo}/issues/comments/{id}": edit_comment,
    "POST /repos/{owner}/{repo}/issues/comments/{id}/reactions": react_to_comment,
    "POST /repos/{owner}/{repo}/issues/{index}/reactions": react_to_issue,
    "GET /repos/{owner}/{repo}/pulls": list_pulls,
    "POST /repos/{owner}/{repo}/pulls": create_pull,
    "GET /repos/{owner}/{repo}/pulls/{index}": get_pull,
    "PATCH /repos/{owner}/{repo}/pulls/{index}": edit_pull,
    **REVIEW_ROUTES,
    "GET /repos/{owner}/{repo}/hooks": list_repo_hooks,
    "POST /repos/{owner}/{repo}/hooks": create_repo_hook,
    "PATCH /repos/{owner}/{repo}/hooks/{id}": edit_repo_hook,
    "GET /orgs/{org}/hooks": list_org_hooks,
    "POST /orgs/{org}/hooks": create_org_hook,
    "PATCH /orgs/{org}/hooks/{id}": edit_org_hook,
}
